/**
 * An RPC call's span (docs/guides/deployment.md "Tracing"). Its attributes are built only when an
 * SDK records it: without one, a call pays for none of this.
 */
import type { FastifyRequest } from "fastify";
import type { MethodEntry } from "../discovery/registry.js";
import type { RpcCall } from "../runtime/call.js";
import { RequestTrace } from "../tracing/request-trace.js";

/** Names from the URL reach the span as attributes, cut to this length. */
const MAX_NAME_LENGTH = 128;

export function startRpcTrace(request: FastifyRequest, trustIncoming: boolean): RequestTrace {
  const trace = RequestTrace.start(request.headers, trustIncoming, "rpc", "server");
  if (trace.recording) trace.setAttributes({ "http.request.method": request.method, "rpc.system": "counterpart", "counterpart.request_id": request.id });
  return trace;
}

/**
 * Named once the method is found: a span's name comes from the app's own names, never
 * from a caller's made-up ones, which would give a tracing backend endless distinct names.
 */
export function nameRpcSpan(call: RpcCall, entry: MethodEntry): void {
  if (call.trace.recording) call.trace.rename(`rpc ${entry.key}`);
}

/** With the call's one log event: what was asked for, the status and the error code. */
export function endRpcSpan(call: RpcCall, status: number, code: string | undefined): void {
  if (call.trace.recording) {
    const kind = call.kind.slice(0, MAX_NAME_LENGTH);
    const id = call.id.slice(0, MAX_NAME_LENGTH);
    call.trace.setAttributes({
      "rpc.service": `${kind}/${id}`,
      "rpc.method": call.method.slice(0, MAX_NAME_LENGTH),
      "counterpart.rpc.kind": kind,
      "counterpart.rpc.id": id,
    });
  }
  call.trace.end(status, code);
}
