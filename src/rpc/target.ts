/**
 * Route → target: which plugin or module method a URL names. Lookups go through `Map`s,
 * so `toString`, `constructor`, `__proto__` or `hasOwnProperty` never resolve.
 */
import { closest } from "../config/did-you-mean.js";
import { errorOf, HttpError, refusalOf } from "../errors/http-error.js";
import type { DevReload } from "../discovery/dev-reload.js";
import type { MethodEntry, Registry, Target } from "../discovery/registry.js";

// A refusal is returned, not thrown: a throw was the largest single cost of a refused call
// in a CPU profile (docs/reference/benchmarks.md "Refusals").

export function resolveTargetItem(registry: Registry, kind: string, id: string): Target | HttpError {
  const target = registry.target(kind, id);
  if (!target) return refusalOf("RPC_UNKNOWN_TARGET");
  // Why it failed is in the log; the caller only learns that it did.
  if (target.failure) return refusalOf("RPC_TARGET_UNAVAILABLE");
  return target;
}

export function resolveMethod(target: Target, method: string, dev = false): MethodEntry | HttpError {
  const entry = target.methods.get(method);
  if (!entry) return dev ? unknownInDevMode(target, method) : refusalOf("RPC_UNKNOWN_METHOD");
  return entry;
}

/**
 * Dev mode names the method and the nearest one the item has, for a typo. Outside dev
 * mode the details stay empty: answering names would let anyone list an item's methods.
 */
function unknownInDevMode(target: Target, method: string): HttpError {
  const didYouMean = closest(method, target.methods.keys());
  const details: Record<string, unknown> = didYouMean === undefined ? { method } : { method, didYouMean };
  const hint = didYouMean === undefined ? "" : `: did you mean "${didYouMean}"?`;
  return errorOf("RPC_UNKNOWN_METHOD", details, `Unknown method "${method}" of ${target.kind} "${target.id}"${hint}`);
}

/**
 * Dev mode's route → target: the target's files are brought up to date first, and a name
 * nobody knows yet (a new item, a new server file's method) is looked for on disk before
 * it is refused (src/discovery/dev-reload.ts).
 */
export async function resolveInDevMode(reload: DevReload, registry: Registry, kind: string, id: string, method: string): Promise<{ target: Target; entry: MethodEntry } | HttpError> {
  if (registry.target(kind, id) === undefined && (kind === "plugin" || kind === "module")) await reload.findNewItems();
  const target = resolveTargetItem(registry, kind, id);
  if (target instanceof HttpError) return target;
  if (target.kind !== "server") {
    await reload.refresh(target);
    if (!target.methods.has(method)) await reload.findNewFiles(target);
  }
  const entry = resolveMethod(target, method, true);
  return entry instanceof HttpError ? entry : { target, entry };
}

/** The stream header must match the method: a mismatch is refused before the method runs. */
export function checkStreamMode(entry: MethodEntry, streamHeader: string | string[] | undefined): void {
  const asked = streamHeader === "1";
  // The browser's way is `$stream`, not the header: name the exact call to write.
  if (entry.policy.streaming && !asked) {
    const call = `xserver.${entry.kind}${member(entry.id)}.$stream${member(entry.name)}(…)`;
    throw errorOf("RPC_STREAM_REQUIRED", {}, `This method streams: call it as ${call} in the browser, or send X-APP-Rpc-Stream: 1`);
  }
  if (!entry.policy.streaming && asked) throw errorOf("RPC_NOT_STREAMABLE");
}

/** `.name`, or `["name"]` for an id like `upstream-demo` that is not a JavaScript identifier. */
function member(name: string): string {
  return /^[A-Za-z_$][\w$]*$/.test(name) ? `.${name}` : `[${JSON.stringify(name)}]`;
}
