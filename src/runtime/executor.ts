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

export function runInline(entry: MethodEntry, ctx: RpcContext, args: readonly unknown[]): Promise<unknown> {
  try {
    checkArgCount(args);
    // A method's own promise is adopted as is; a plain value or a throw becomes one.
    return Promise.resolve(entry.fn(ctx, ...args));
  } catch (error) {
    return Promise.reject(error);
  }
}
