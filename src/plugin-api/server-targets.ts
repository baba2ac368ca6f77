/**
 * `importServerModule` / `importServerExport` (docs/guides/server-methods.md "Server methods"): one server file
 * of this or another plugin or module, loaded as the RPC path loads it (the same module
 * instance). Only server files can be reached, and a path cannot leave its item's folder:
 * the check is on the real path, so a symlink pointing out of the item is refused too.
 *
 *   "plugin:<id>" / "module:<id>"           that item's index server file
 *   "plugin:<id>/<path>" / "module:<id>/…"  <path> below that item's folder
 *   "./<path>" / "../<path>"                below the calling item's folder
 *   { kind, id, path }                      as given (kind "self" is the caller's item)
 */
import { realpath, stat } from "node:fs/promises";
import { isAbsolute, posix, relative, resolve, sep } from "node:path";

/** Where the items of one server live, and how it imports a server file. */
export interface ServerTargetScope {
  /** `kind/id` → the item's folder. */
  itemDirs: ReadonlyMap<string, string>;
  importFile(file: string): Promise<Record<string, unknown>>;
  /**
   * Resolved targets, when files do not change while the server runs (outside dev mode):
   * plugins call importServerExport on every request, and each resolution costs a few
   * stat and realpath calls.
   */
  resolved?: Map<string, string>;
}

const SERVER_FILE = /\.server\.(?:js|mjs|ts)$/i;
const CANDIDATES = [".server.ts", ".server.mjs", ".server.js", "/index.server.ts", "/index.server.mjs", "/index.server.js"];

interface ParsedTarget {
  kind: "plugin" | "module";
  id: string;
  path: string;
}

function parseTarget(ctx: unknown, target: unknown): ParsedTarget {
  const caller = ctx as { kind?: unknown; itemId?: unknown; id?: unknown } | null | undefined;
  const self = (): Pick<ParsedTarget, "kind" | "id"> => {
    const kind = caller?.kind;
    const id = caller?.itemId ?? caller?.id;
    if ((kind !== "plugin" && kind !== "module") || typeof id !== "string") {
      throw new Error("A relative server target needs the ctx of a plugin or module method");
    }
    return { kind, id };
  };
  if (typeof target === "string") {
    const named = /^(plugin|module):([^/]+)(?:\/(.*))?$/.exec(target);
    if (named) return { kind: named[1] as ParsedTarget["kind"], id: named[2]!, path: named[3] || "index" };
    if (target.startsWith("./") || target.startsWith("../")) return { ...self(), path: target };
  } else if (target !== null && typeof target === "object") {
    const { kind, id, path } = target as { kind?: unknown; id?: unknown; path?: unknown };
    const item = kind === "self" ? self() : { kind, id };
    if ((item.kind === "plugin" || item.kind === "module") && typeof item.id === "string") {
      return { kind: item.kind, id: item.id, path: typeof path === "string" && path !== "" ? path : "index" };
    }
  }
  throw new Error(`Unsupported server target ${JSON.stringify(target)}: use "plugin:<id>/<path>", "module:<id>/<path>", "./<path>" or { kind, id, path }`);
}

function isInside(root: string, path: string): boolean {
  const inside = relative(root, path);
  return inside !== "" && inside !== ".." && !inside.startsWith(".." + sep) && !isAbsolute(inside);
}

async function isFile(path: string): Promise<boolean> {
  return stat(path).then((info) => info.isFile(), () => false);
}

/** The absolute path of the server file a target names. */
export async function resolveServerTarget(scope: ServerTargetScope, ctx: unknown, target: unknown): Promise<string> {
  const parsed = parseTarget(ctx, target);
  // Normalised, so that spellings of one path (which a caller might build from input) share one entry.
  const key = `${parsed.kind}/${parsed.id}\0${posix.normalize(parsed.path.replace(/\\/g, "/").replace(/^\/+/, ""))}`;
  const known = scope.resolved?.get(key);
  if (known !== undefined) return known;
  const file = await findServerTarget(scope, parsed, target);
  scope.resolved?.set(key, file);
  return file;
}

async function findServerTarget(scope: ServerTargetScope, parsed: ParsedTarget, target: unknown): Promise<string> {
  const dir = scope.itemDirs.get(`${parsed.kind}/${parsed.id}`);
  if (dir === undefined) throw new Error(`Unknown ${parsed.kind} '${parsed.id}'`);
  const escapes = () => new Error(`Server target ${JSON.stringify(target)} escapes the folder of ${parsed.kind} '${parsed.id}'`);
  const wanted = resolve(dir, parsed.path.replace(/\\/g, "/").replace(/^\/+/, ""));
  if (!isInside(dir, wanted)) throw escapes();
  const root = await realpath(dir);
  const candidates = SERVER_FILE.test(wanted) ? [wanted] : CANDIDATES.map((suffix) => wanted + suffix);
  for (const candidate of candidates) {
    if (!(await isFile(candidate))) continue;
    if (!isInside(root, await realpath(candidate))) throw escapes();
    // The path as discovery saw it (not the real one): the same URL is the same module instance.
    return candidate;
  }
  throw new Error(`Unable to resolve server file for target ${JSON.stringify(target)}: only *.server.{ts,mjs,js} files can be imported`);
}

export async function importServerModule(scope: ServerTargetScope, ctx: unknown, target: unknown): Promise<Record<string, unknown>> {
  return scope.importFile(await resolveServerTarget(scope, ctx, target));
}

/** One export; `"default"` gives the default export, else the whole module. */
export async function importServerExport(scope: ServerTargetScope, ctx: unknown, target: unknown, exportName = "default"): Promise<unknown> {
  const namespace = await importServerModule(scope, ctx, target);
  const value = exportName === "default" ? (namespace.default ?? namespace) : Object.hasOwn(namespace, exportName) ? namespace[exportName] : undefined;
  if (value === undefined) throw new Error(`Export '${exportName}' was not found for target ${JSON.stringify(target)}`);
  return value;
}
