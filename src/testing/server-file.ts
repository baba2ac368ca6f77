/**
 * `loadServerFile`: a server file imported as the server imports it, and what its `policy`
 * says of each method that a made-up `ctx` must follow (whether `ctx.emit` works).
 */
import { resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { importServerFile } from "../discovery/import-server-file.js";
import { ensureAppServerGlobal } from "./app-server-global.js";

/**
 * `policy.<name>.runtime.streaming` of each method of a loaded file, by function: a test
 * hands `callMethod` the function alone, and the file it came from is known only here.
 * Null when the file exports the function under names that disagree.
 */
const streamingOf = new WeakMap<object, boolean | null>();

/**
 * Imports a server file as the server does, `.ts` included (types stripped by the
 * server's own loader, so a `node:test` file can call a TypeScript method on Node 20).
 * A server in this process that loads the same file shares the one module instance.
 */
export async function loadServerFile<M = Record<string, unknown>>(file: string | URL): Promise<M> {
  ensureAppServerGlobal();
  const path = typeof file === "string" ? resolve(file) : fileURLToPath(file);
  const namespace = await importServerFile(path);
  rememberPolicy(namespace);
  return namespace as M;
}

/** Whether the file `fn` was loaded from declares it streaming; undefined when unknown. */
export function declaredStreaming(fn: object): boolean | undefined {
  return streamingOf.get(fn) ?? undefined;
}

function rememberPolicy(namespace: Record<string, unknown>): void {
  const policy = isObject(namespace.policy) ? namespace.policy : {};
  for (const [name, value] of Object.entries(namespace)) {
    if (typeof value !== "function") continue;
    const entry = policy[name];
    // The server's rule (discovery/policy.ts): only `runtime.streaming` counts, and only `true`.
    const streaming = isObject(entry) && isObject(entry.runtime) && entry.runtime.streaming === true;
    const known = streamingOf.get(value);
    streamingOf.set(value, known === undefined || known === streaming ? streaming : null);
  }
}

function isObject(value: unknown): value is Record<string, any> {
  return typeof value === "object" && value !== null;
}
