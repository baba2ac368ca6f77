/**
 * Loads the server files of one plugin or module and builds its method table. Used at
 * start, and again for a single edited file in dev mode.
 *
 * Which functions are methods (`server.rpc.expose`, docs/guides/server-methods.md "Server methods"): with
 * "exports", every function export but `policy`; with "policy", only the functions the
 * same file names in its `policy`. A boot hook file serves its policy-listed functions in
 * both modes, and `register` never.
 */
import { stat } from "node:fs/promises";
import { StartupError } from "../errors/http-error.js";
import { closest } from "../config/did-you-mean.js";
import type { RpcSettings } from "../config/resolve.js";
import { readPolicyExport, resolvePolicy } from "./policy.js";
import { importServerFile } from "./import-server-file.js";
import { explainLoadError } from "./load-error.js";
import type { MethodEntry, ServerFile, Target, TargetKind } from "./registry.js";
import { mayUseSession } from "./session-use.js";

export async function loadServerFile(path: string, version?: number, bootHook = false): Promise<ServerFile> {
  const { mtimeMs } = await stat(path);
  let namespace: Record<string, unknown>;
  try {
    namespace = await importServerFile(path, version);
  } catch (error) {
    throw await explainLoadError(path, error);
  }
  const functions = new Map<string, (...args: unknown[]) => unknown>();
  for (const [name, value] of Object.entries(namespace)) {
    // `default` is not a named export; `policy` is configuration; non-functions are data.
    if (name === "default" || name === "policy" || typeof value !== "function") continue;
    functions.set(name, value as (...args: unknown[]) => unknown);
  }
  return { path, mtimeMs, version, bootHook, functions, policies: readPolicyExport(namespace.policy, path) };
}

/** The method table of a target; a name exported by two files is a startup error. */
export function buildMethods(
  kind: TargetKind,
  id: string,
  files: readonly ServerFile[],
  defaults: RpcSettings,
  warn: (message: string) => void,
): Map<string, MethodEntry> {
  const methods = new Map<string, MethodEntry>();
  const itemKey = `${kind}/${id}`;
  for (const file of files) {
    const policyOnly = file.bootHook || defaults.expose === "policy";
    for (const [name, fn] of file.functions) {
      if (policyOnly && !file.policies.has(name)) continue;
      if (file.bootHook && name === "register") {
        warn(`${file.path}: "register" is the boot hook and never a method; its policy entry is ignored`);
        continue;
      }
      const existing = methods.get(name);
      if (existing) {
        throw new StartupError(
          "STARTUP_ITEM_FAILED",
          `${kind} ${id}: method "${name}" is exported by both ${existing.file} and ${file.path}`,
        );
      }
      const key = `${itemKey}/${name}`;
      const policy = resolvePolicy(file.policies.get(name), defaults, key, itemKey);
      methods.set(name, { kind, id, name, key, fn, file: file.path, fileVersion: file.version, moduleVersions: file.moduleVersions, policy, usesSession: mayUseSession(fn) });
    }
    for (const name of file.policies.keys()) {
      if (file.functions.has(name)) continue;
      // A typo leaves the function meant with the default policy (session-bound, default
      // limits), with nothing else to show for it.
      const meant = closest(name, file.functions.keys());
      const hint = meant === undefined ? "" : `: did you mean "${meant}"? ("${meant}" keeps the default policy meanwhile)`;
      warn(`${file.path}: policy entry "${name}" names no exported function${hint}`);
    }
  }
  return methods;
}

/** Loads every server file of an item; the first that fails throws, naming its file. */
export async function loadServerFiles(paths: readonly string[], bootHook: string | undefined, onWaiting?: (what: string) => void): Promise<ServerFile[]> {
  const files: ServerFile[] = [];
  for (const path of bootHook ? [bootHook, ...paths] : paths) {
    onWaiting?.(`the server file ${path} to load`);
    try {
      files.push(await loadServerFile(path, undefined, path === bootHook));
    } catch (error) {
      throw new ItemLoadError(path, error);
    }
  }
  return files;
}

/** A server file or boot hook that failed: the item fails, the rest of the server serves. */
export class ItemLoadError extends Error {
  readonly file: string | undefined;

  constructor(file: string | undefined, cause: unknown) {
    const reason = cause instanceof Error ? cause.message : String(cause);
    // A reason that starts with the file's own place (`file:3:7: …`) names it already.
    super(file && !reason.startsWith(`${file}:`) ? `${file}: ${reason}` : reason, { cause });
    this.file = file;
  }
}
