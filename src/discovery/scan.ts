/**
 * Finds plugins, modules and their server files below the app root (docs/guides/server-methods.md "Server methods").
 * Runs once at start, and in dev mode again for a call that names what is not known yet
 * (dev-reload.ts). `node_modules` and dot-folders are never entered.
 */
import { readdir } from "node:fs/promises";
import { join } from "node:path";
import { StartupError } from "../errors/http-error.js";
import type { TargetKind } from "./registry.js";

export const SERVER_FILE = /\.server\.(?:js|mjs|ts)$/;
const BOOT_HOOK = /^register\.server\.(?:js|mjs|ts)$/;

export interface FoundItem {
  kind: Exclude<TargetKind, "server">;
  id: string;
  dir: string;
  serverFiles: string[];
  bootHook: string | undefined;
}

export const ITEM_FOLDERS = { plugin: "plugins", module: "modules" } as const;

/** Every plugin and module below `root`, but those `known` (dev mode looks for new ones only). */
export async function scanRoot(root: string, known?: (kind: FoundItem["kind"], id: string) => boolean): Promise<FoundItem[]> {
  const items: FoundItem[] = [];
  for (const kind of ["plugin", "module"] as const) {
    const base = join(root, ITEM_FOLDERS[kind]);
    for (const entry of await listDir(base)) {
      if (!entry.isDirectory() || skipped(entry.name) || known?.(kind, entry.name)) continue;
      items.push(await scanItem(kind, entry.name, join(base, entry.name)));
    }
  }
  return items.sort((a, b) => (a.kind === b.kind ? a.id.localeCompare(b.id) : a.kind === "plugin" ? -1 : 1));
}

/** One item's server files and boot hook. */
export async function scanItem(kind: FoundItem["kind"], id: string, dir: string): Promise<FoundItem> {
  const files = (await walk(dir)).sort();
  const hooks = files.filter((file) => BOOT_HOOK.test(file.slice(dir.length + 1)));
  if (hooks.length > 1) {
    throw new StartupError("STARTUP_ITEM_FAILED", `${kind} ${id} has more than one boot hook: ${hooks.join(", ")}`);
  }
  return { kind, id, dir, serverFiles: files.filter((file) => !hooks.includes(file)), bootHook: hooks[0] };
}

async function walk(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const entry of await listDir(dir)) {
    if (skipped(entry.name)) continue;
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...(await walk(path)));
    else if (entry.isFile() && SERVER_FILE.test(entry.name)) out.push(path);
  }
  return out;
}

function skipped(name: string): boolean {
  return name.startsWith(".") || name === "node_modules";
}

async function listDir(dir: string) {
  try {
    return await readdir(dir, { withFileTypes: true });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return [];
    throw error;
  }
}
