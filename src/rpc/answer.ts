/**
 * The last step of every call: the JSON answer (or a stream's terminal record) and exactly
 * one structured log event (`rpc.complete`, `rpc.error`, `rpc.timeout`, `rpc.rejected` or
 * `rpc.circuit_open`).
 */
import type { FastifyReply } from "fastify";
import { errorOf, HttpError, isHttpError } from "../errors/http-error.js";
import { BadOutputError } from "../validation/check.js";
import type { EventLog } from "../log/event-line.js";
import type { SecretMask } from "../log/mask-secrets.js";
import type { RpcEventRecord } from "../log/events.js";
import type { RpcCall } from "../runtime/call.js";
import { CallTimeoutError, ClientGoneError } from "../runtime/call-lifetime.js";
import { SerializedResult } from "../runtime/serialized-result.js";
import { errorJson, JSON_TYPE, sendError } from "../http/send-error.js";
import type { NdjsonStream } from "./ndjson-stream.js";
import { endRpcSpan } from "./call-trace.js";

export interface AnswerOptions {
  dev: boolean;
  /** Where the call's one event goes: the server's logger. */
  log: EventLog;
  /** The log's masker: an error answer may echo a method's message or details, which may quote a secret. */
  maskSecrets: SecretMask | null;
  /** Called once per call, after its log event. */
  listeners: ReadonlyArray<(record: RpcEventRecord) => void>;
}

/**
 * `result` comes from the runtime, already serialised (so a bad result was caught there).
 * A streaming call that was admitted gets it as its terminal record.
 */
export function answerResult(reply: FastifyReply, call: RpcCall, result: SerializedResult, options: AnswerOptions, stream?: NdjsonStream | null): void {
  if (stream?.opened) {
    stream.finish(`"ok":true,"result":${result.json}}`);
    logEvent(options, "rpc.complete", call, 200, undefined, undefined, stream);
    return;
  }
  logEvent(options, "rpc.complete", call, 200, undefined);
  if (clientGone(reply)) return;
  reply.code(200).header("content-type", JSON_TYPE).send(`{"result":${result.json}}`);
}

/**
 * A refusal before admission is a plain JSON error, streaming or not; once a stream is
 * open, the error is its terminal record, with the status the JSON answer would have had.
 */
export function answerError(reply: FastifyReply, call: RpcCall, error: unknown, options: AnswerOptions, stream?: NdjsonStream | null): void {
  const open = stream?.opened ? stream : undefined;
  if (error instanceof ClientGoneError) {
    open?.abandon();
    // Nobody to answer; still one event so every call is accounted for.
    logEvent(options, "rpc.error", call, 499, "RPC_CLIENT_CLOSED", undefined, open);
    return;
  }
  const rpcError = toRpcError(error, call, options.dev);
  const event = eventFor(rpcError, call);
  // The log gets the real error: the one answered may be a generic stand-in for it. A
  // timeout has nothing more to say than its event and code.
  const logged = error instanceof CallTimeoutError ? undefined : isHttpError(error) ? (error as { cause?: unknown }).cause : error;
  if (open) {
    open.finish(`"ok":false,"status":${rpcError.status},${errorJson(rpcError, options.maskSecrets).slice(1)}`);
    logEvent(options, event, call, rpcError.status, rpcError.code, logged, open);
    return;
  }
  logEvent(options, event, call, rpcError.status, rpcError.code, logged);
  if (clientGone(reply)) return;
  sendError(reply, rpcError, { mask: options.maskSecrets, headers: rpcError.code === "RPC_METHOD_NOT_ALLOWED" ? ALLOW_POST : undefined });
}

const ALLOW_POST = { allow: "POST" };

function toRpcError(error: unknown, call: RpcCall, dev: boolean): HttpError {
  if (error instanceof CallTimeoutError) {
    // `queued`: the timeout passed while the call waited for a concurrency slot.
    const { timeoutMs } = error;
    return errorOf("RPC_TIMEOUT", call.queued && call.phase === "check" ? { timeoutMs, queued: true } : { timeoutMs });
  }
  if (isHttpError(error)) {
    // A bad result's reason may quote the method's data: like any internal error, only
    // the request id is answered.
    // An `output` failure keeps its own message, and its issues in dev mode (values masked).
    if (error instanceof BadOutputError) return new HttpError(500, error.code, error.message, { ...error.details, requestId: call.requestId });
    if (error.code === "RPC_BAD_RESULT") return errorOf("RPC_BAD_RESULT", { requestId: call.requestId });
    return error;
  }
  // Outside dev mode a method's own error text may hold internals: answer a generic
  // message with the request id, and keep the real error for the log.
  const message = dev && error instanceof Error ? error.message : undefined;
  return errorOf("RPC_INTERNAL_ERROR", { requestId: call.requestId }, message);
}

function eventFor(error: HttpError, call: RpcCall): string {
  if (error.code === "RPC_TIMEOUT") return "rpc.timeout";
  if (error.code === "RPC_CIRCUIT_OPEN") return "rpc.circuit_open";
  return call.phase === "check" ? "rpc.rejected" : "rpc.error";
}

/** The fields of every call's event, in the order `logEvent` writes them. */
export const RPC_EVENT_FIELDS = ["event", "reqId", "traceId", "kind", "id", "method", "contextId", "durationMs", "status", "code", "err", "events", "bytes"] as const;

/** The call's one event; `sized` gives a stream's events and bytes, or a file answer's bytes. */
export function logEvent(
  options: AnswerOptions,
  event: string,
  call: RpcCall,
  status: number,
  code: string | undefined,
  err?: unknown,
  stream?: { events?: number; bytes?: number },
): void {
  const { log, listeners } = options;
  const durationMs = Math.round((performance.now() - call.startedAt) * 1000) / 1000;
  // One shape for every event (pino leaves out undefined fields, so `code` and `err` are
  // absent when unset): adding fields conditionally cost a hidden-class change per call.
  const fields = {
    event,
    reqId: call.requestId,
    // The caller's or the span's, or one `ctx.trace` made; absent when nobody traced the call.
    traceId: call.trace.traceId,
    kind: call.kind,
    id: call.id,
    method: call.method,
    contextId: call.contextId,
    durationMs,
    status,
    code,
    err,
    // A stream's size: how many events reached the wire and their bytes.
    events: stream?.events,
    bytes: stream?.bytes,
  };
  log.write(status >= 500 ? "error" : event === "rpc.complete" ? "info" : "warn", fields, event);
  endRpcSpan(call, status, code);
  if (listeners.length === 0) return;
  const record: RpcEventRecord = { event, kind: call.kind, id: call.id, method: call.method, status, code, durationMs, events: stream?.events, bytes: stream?.bytes };
  for (const listener of listeners) listener(record);
}

function clientGone(reply: FastifyReply): boolean {
  return reply.raw.destroyed || reply.sent;
}
