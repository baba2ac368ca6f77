/**
 * Runs one method call. This is the single place a method is invoked; the runtime steps
 * (breaker, queue, timeout, isolation) wrap it.
 */
import type { MethodEntry } from "../discovery/registry.js";
import type { RpcContext } from "../plugin-api/context.js";

export function runInline(entry: MethodEntry, ctx: RpcContext, args: readonly unknown[]): Promise<unknown> {
  try {
    // A method's own promise is adopted as is; a plain value or a throw becomes one.
    return Promise.resolve(entry.fn(ctx, ...args));
  } catch (error) {
    return Promise.reject(error);
  }
}
