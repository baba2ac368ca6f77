/**
 * Runs one method call. This is the single place a method is invoked; the runtime steps
 * (breaker, queue, timeout, isolation) wrap it.
 */
import { errorOf } from "../errors/http-error.js";
import type { MethodEntry } from "../discovery/registry.js";
import type { RpcContext } from "../plugin-api/context.js";

/**
 * The most arguments a method is called with (docs/guides/server-methods.md "Runtime protections"). The gateway
 * refuses more when it reads the body (400 `RPC_BAD_REQUEST`); spreading an unbounded
 * array onto the stack overflows it (some 100 000 arguments, a 250 KB body) as a 500.
 */
export const MAX_METHOD_ARGS = 64;

/** Throws when `args` is over the bound: every place that spreads them checks it first. */
export function checkArgCount(args: readonly unknown[]): void {
  if (args.length > MAX_METHOD_ARGS) {
    throw errorOf("RPC_BAD_REQUEST", { reason: "too-many-args", limit: MAX_METHOD_ARGS }, `At most ${MAX_METHOD_ARGS} arguments`);
  }
}

/** A synchronous method's value, told apart from a promise without making one. */
export class SyncResult {
  constructor(readonly value: unknown) {}
}

/**
 * Runs the method; a plain value comes back wrapped in a `SyncResult`, so that the runtime
 * goes on without a promise or a tick (most methods are synchronous). A throw or anything
 * thenable comes back as a promise.
 */
export function runInlineSync(entry: MethodEntry, ctx: RpcContext, args: readonly unknown[]): SyncResult | Promise<unknown> {
  try {
    checkArgCount(args);
    const value = entry.fn(ctx, ...args);
    if (value instanceof Promise) return value;
    return isThenable(value) ? Promise.resolve(value) : new SyncResult(value);
  } catch (error) {
    return Promise.reject(error);
  }
}

function isThenable(value: unknown): boolean {
  return (typeof value === "object" || typeof value === "function") && value !== null && typeof (value as { then?: unknown }).then === "function";
}
