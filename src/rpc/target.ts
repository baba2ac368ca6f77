/**
 * Route → target: which plugin or module method a URL names. Lookups go through `Map`s,
 * so `toString`, `constructor`, `__proto__` or `hasOwnProperty` never resolve.
 */
import { errorOf } from "../errors/http-error.js";
import type { MethodEntry, Registry, Target } from "../discovery/registry.js";

export function resolveTargetItem(registry: Registry, kind: string, id: string): Target {
  const target = registry.target(kind, id);
  if (!target) throw errorOf("RPC_UNKNOWN_TARGET");
  // Why it failed is in the log; the caller only learns that it did.
  if (target.failure) throw errorOf("RPC_TARGET_UNAVAILABLE");
  return target;
}

export function resolveMethod(target: Target, method: string): MethodEntry {
  const entry = target.methods.get(method);
  if (!entry) throw errorOf("RPC_UNKNOWN_METHOD");
  return entry;
}

/** The stream header must match the method: a mismatch is refused before the method runs. */
export function checkStreamMode(entry: MethodEntry, streamHeader: string | string[] | undefined): void {
  const asked = streamHeader === "1";
  if (entry.policy.streaming && !asked) throw errorOf("RPC_STREAM_REQUIRED");
  if (!entry.policy.streaming && asked) throw errorOf("RPC_NOT_STREAMABLE");
}
