/**
 * Runs one method call. This is the single place a method is invoked; the runtime steps
 * (breaker, queue, timeout, isolation) wrap it.
 */
import type { MethodEntry } from "../discovery/registry.js";
import type { RpcContext } from "../rpc/context.js";

export async function runInline(entry: MethodEntry, ctx: RpcContext, args: readonly unknown[]): Promise<unknown> {
  return await entry.fn(ctx, ...args);
}
