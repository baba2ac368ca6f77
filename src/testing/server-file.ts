/**
 * `loadServerFile`: a server file imported as the server imports it, and what its `policy`
 * says of each method that a made-up call must follow (`ctx.emit`, `input`, `output`, `errors`).
 */
import { resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { importServerFile } from "../discovery/import-server-file.js";
import { ensureAppServerGlobal } from "./app-server-global.js";
import { readPolicyExport, type MethodPolicy } from "../discovery/policy.js";
import type { StandardSchemaV1 } from "../validation/standard-schema.js";

/**
 * What the `policy` of each method of a loaded file says that a made-up call must follow
 * (whether `ctx.emit` works, its `input`, `output` and declared errors), by function: a
 * test hands `callMethod` the function alone, and the file it came from is known only
 * here. Null when the file exports the function under names whose policies disagree.
 */
const policyOf = new WeakMap<object, DeclaredPolicy | null>();

export interface DeclaredPolicy {
  streaming: boolean;
  input: StandardSchemaV1 | undefined;
  output: StandardSchemaV1 | undefined;
  errors: MethodPolicy["errors"];
}

/**
 * Imports a server file as the server does, `.ts` included (types stripped by the
 * server's own loader, so a `node:test` file can call a TypeScript method on Node 20).
 * A server in this process that loads the same file shares the one module instance.
 * A `policy` the server would refuse (an `input` that is no Standard Schema, a bad
 * `errors` entry…) rejects, naming the file and the method, as the server fails the item.
 */
export async function loadServerFile<M = Record<string, unknown>>(file: string | URL): Promise<M> {
  ensureAppServerGlobal();
  const path = typeof file === "string" ? resolve(file) : fileURLToPath(file);
  const namespace = await importServerFile(path);
  rememberPolicy(namespace, readPolicyExport(namespace.policy, path));
  return namespace as M;
}

/** What the policy of the file `fn` was loaded from declares for it; undefined when unknown. */
export function declaredPolicy(fn: object): DeclaredPolicy | undefined {
  return policyOf.get(fn) ?? undefined;
}

function rememberPolicy(namespace: Record<string, unknown>, policies: Map<string, MethodPolicy>): void {
  for (const [name, value] of Object.entries(namespace)) {
    if (typeof value !== "function") continue;
    const entry = policies.get(name);
    // The server's rule (discovery/policy.ts): only `runtime.streaming` counts, and only `true`.
    const declared: DeclaredPolicy = {
      streaming: entry?.runtime?.streaming === true,
      input: entry?.input,
      output: entry?.output,
      errors: entry?.errors,
    };
    const known = policyOf.get(value);
    policyOf.set(value, known === undefined || samePolicy(known, declared) ? declared : null);
  }
}

function samePolicy(a: DeclaredPolicy | null, b: DeclaredPolicy): boolean {
  return a !== null && a.streaming === b.streaming && a.input === b.input && a.output === b.output && a.errors === b.errors;
}
