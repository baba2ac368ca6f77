/**
 * Loads the server files of one plugin or module and builds its method table. Used at
 * start, and again for a single edited file in dev mode.
 */
import { stat } from "node:fs/promises";
import { StartupError } from "../errors/http-error.js";
import type { RpcSettings } from "../config/resolve.js";
import { readPolicyExport, resolvePolicy } from "./policy.js";
import { importServerFile } from "./import-server-file.js";
import type { MethodEntry, ServerFile, Target, TargetKind } from "./registry.js";

export async function loadServerFile(path: string, version?: number): Promise<ServerFile> {
  const { mtimeMs } = await stat(path);
  const namespace = await importServerFile(path, version);
  const functions = new Map<string, (...args: unknown[]) => unknown>();
  for (const [name, value] of Object.entries(namespace)) {
    // `default` is not a named export; `policy` is configuration; non-functions are data.
    if (name === "default" || name === "policy" || typeof value !== "function") continue;
    functions.set(name, value as (...args: unknown[]) => unknown);
  }
  return { path, mtimeMs, functions, policies: readPolicyExport(namespace.policy, path) };
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
  for (const file of files) {
    for (const [name, fn] of file.functions) {
      const existing = methods.get(name);
      if (existing) {
        throw new StartupError(
          `${kind} ${id}: method "${name}" is exported by both ${existing.file} and ${file.path}`,
        );
      }
      const key = `${kind}/${id}/${name}`;
      methods.set(name, { kind, id, name, key, fn, file: file.path, fileVersion: file.mtimeMs, policy: resolvePolicy(file.policies.get(name), defaults, key) });
    }
    for (const name of file.policies.keys()) {
      if (!file.functions.has(name)) warn(`${file.path}: policy entry "${name}" names no exported function`);
    }
  }
  return methods;
}

export async function loadTarget(
  kind: Exclude<TargetKind, "server">,
  id: string,
  dir: string,
  paths: readonly string[],
  config: unknown,
  defaults: RpcSettings,
  warn: (message: string) => void,
): Promise<Target> {
  const files: ServerFile[] = [];
  for (const path of paths) {
    try {
      files.push(await loadServerFile(path));
    } catch (error) {
      if (error instanceof StartupError) throw error;
      throw new StartupError(`cannot load server file ${path}: ${(error as Error).message}`, { cause: error });
    }
  }
  return { kind, id, dir, files, config, methods: buildMethods(kind, id, files, defaults, warn) };
}
