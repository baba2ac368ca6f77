/**
 * What the gateway knows about a call as it moves along the request path; the answer
 * step turns it into exactly one log event.
 */
import type { RequestTrace } from "../tracing/request-trace.js";

export type CallPhase = "check" | "run";

export interface RpcCall {
  requestId: string;
  startedAt: number;
  kind: string;
  id: string;
  method: string;
  /** The verifier context that applied, null until the body is read. */
  contextId: string | null;
  phase: CallPhase;
  /** Set when the queue held the call, for `details.queued` on a timeout. */
  queued: boolean;
  /** `ctx.trace`, the call's span, and the `traceId` of its log event. */
  trace: RequestTrace;
}

export function startCall(requestId: string, params: { kind: string; id: string; method: string }, trace: RequestTrace): RpcCall {
  return {
    requestId,
    startedAt: performance.now(),
    kind: params.kind,
    id: params.id,
    method: params.method,
    contextId: null,
    phase: "check",
    queued: false,
    trace,
  };
}
