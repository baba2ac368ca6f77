import type { IncomingMessage, ServerResponse } from "node:http";
import type { MethodEntry } from "../discovery/registry.js";
import type { Logger } from "../log/logger.js";
import type { RpcCall } from "../rpc/call.js";
import type { IsolatedRpcContext, RpcContext } from "../rpc/context.js";

/** Everything the runtime needs to run one checked call. */
export interface Invocation {
  entry: MethodEntry;
  call: RpcCall;
  args: unknown[];
  session: { id: string } | null;
  user: unknown;
  viewerId: string | undefined;
  contextId: string | undefined;
  config: unknown;
  log: Logger;
  req: IncomingMessage;
  res: ServerResponse;
  /** The call's one controller: the gateway aborts it when the client goes away, the runtime on timeout. */
  controller: AbortController;
}

export function inlineContext(invocation: Invocation, signal: AbortSignal): RpcContext {
  let log: Logger | undefined;
  return {
    signal,
    session: invocation.session,
    user: invocation.user,
    viewerId: invocation.viewerId,
    contextId: invocation.contextId,
    kind: invocation.entry.kind,
    id: invocation.entry.id,
    method: invocation.entry.name,
    requestId: invocation.call.requestId,
    config: invocation.config,
    // A child logger costs an allocation and bindings serialisation: made on first use.
    get log(): Logger {
      log ??= invocation.log.child({ reqId: invocation.call.requestId, kind: invocation.entry.kind, id: invocation.entry.id, method: invocation.entry.name });
      return log;
    },
    req: invocation.req,
    res: invocation.res,
  };
}

/** The serialisable part, for worker isolation (SPEC "Limits"). `signal` is re-created in the worker. */
export function isolatedContext(invocation: Invocation): Omit<IsolatedRpcContext, "signal"> {
  return {
    args: invocation.args,
    session: invocation.session,
    user: invocation.user,
    viewerId: invocation.viewerId,
    contextId: invocation.contextId,
    kind: invocation.entry.kind,
    id: invocation.entry.id,
    method: invocation.entry.name,
    requestId: invocation.call.requestId,
    config: invocation.config,
  };
}
