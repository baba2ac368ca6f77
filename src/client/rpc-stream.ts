/**
 * One streaming RPC call (docs/guides/browser.md "Streaming calls"): the same POST as
 * `rpcCall` with `X-APP-Rpc-Stream: 1`, answered with NDJSON records. The handle comes
 * back at once; a pump reads the answer to its end whether or not the caller reads the
 * events, so `result` always settles, and only the terminal record can make it succeed.
 */
import { checkTransport, getAppHttpClient, type RpcTransport } from "./app-context.js";
import { HttpError, ResponseParseError, StreamError } from "./errors.js";
import { EventQueue } from "./event-queue.js";
import { checkTimeout, DEFAULT_STALL_TIMEOUT_MS } from "./http-client.js";
import { rpcBody, rpcCsrfHeaders, type RpcRequest } from "./rpc.js";
import { notifySessionLoss } from "./session-recovery.js";
import type { StreamResponse } from "./stream-response.js";
import { Watchdog } from "./watchdog.js";

export const STREAM_HEADER = "X-APP-Rpc-Stream";
const NDJSON_TYPE = /^\s*application\/x-ndjson\b/i;

export interface RpcStreamHandle<E = unknown, R = unknown> {
  /** The server's events in order; ends when the call succeeds, throws what it failed with. */
  readonly events: AsyncIterable<E>;
  /** The method's result, or the call's failure. */
  readonly result: Promise<R>;
  /** Ends the call (the server's method sees its signal abort); `result` rejects with `reason`. */
  abort(reason?: unknown): void;
}

export function rpcStream(call: RpcRequest): RpcStreamHandle {
  return streamHandle((events, controller) => pump(call, events, controller), call.signal);
}

/** A handle for a call that cannot start: its result rejects with `error`. */
export function failedStream(error: unknown): RpcStreamHandle {
  return streamHandle(() => Promise.reject(error), undefined);
}

function streamHandle(
  run: (events: EventQueue<unknown>, controller: AbortController) => Promise<unknown>,
  caller: AbortSignal | undefined,
): RpcStreamHandle {
  const controller = new AbortController();
  const events = new EventQueue<unknown>();
  const onCallerAbort = (): void => controller.abort(caller?.reason);
  caller?.addEventListener("abort", onCallerAbort, { once: true });
  if (caller?.aborted) onCallerAbort();

  const result = run(events, controller);
  const release = (): void => caller?.removeEventListener("abort", onCallerAbort);
  // Settles the events, and marks `result` handled: a caller who only reads the events,
  // or only fires the call, must not see an "unhandled rejection".
  result.then(
    () => {
      release();
      events.close();
    },
    (error: unknown) => {
      release();
      events.fail(error);
    },
  );
  return { events: events.drain(), result, abort: (reason) => controller.abort(reason) };
}

async function pump(call: RpcRequest, events: EventQueue<unknown>, controller: AbortController): Promise<unknown> {
  const { signal } = controller;
  const client = call.client ?? getAppHttpClient();
  checkTransport(client);
  const stream = streamOf(client);
  const stallTimeoutMs = call.stallTimeoutMs ?? client.stallTimeoutMs ?? DEFAULT_STALL_TIMEOUT_MS;
  checkTimeout(stallTimeoutMs, "stallTimeoutMs", "xserver");
  const stalled = (cause?: unknown): StreamError =>
    new StreamError("RPC_STREAM_STALLED", `POST ${call.path}: nothing arrived for ${stallTimeoutMs} ms`, { url: call.path, method: "POST", cause });
  const watchdog = new Watchdog(stallTimeoutMs, () => controller.abort(stalled()));
  let response: StreamResponse | undefined;
  // The transport ends its body on our signal too; this covers one that does not.
  const endBody = (): void => response?.cancel(signal.reason);
  signal.addEventListener("abort", endBody, { once: true });
  try {
    try {
      // Up to the headers, the silence is bounded per attempt by the transport's own timer:
      // the transport's waits between retries and for a refreshed secret are not the
      // server's silence, and only the transport knows when it is in one.
      response = await stream(call.path, {
        method: "POST",
        body: rpcBody(call),
        headers: { ...rpcCsrfHeaders(client, call.path), [STREAM_HEADER]: "1" },
        signal,
        timeoutMs: stallTimeoutMs,
        // Every piece of the body is a sign of life, not only a complete line: one large
        // event on a slow link may take longer than stallTimeoutMs to arrive in full.
        onChunk: () => watchdog.arm(),
      });
    } catch (error) {
      notifySessionLoss(error, "rpc");
      if (!signal.aborted && isTimeout(error)) throw stalled(error);
      throw error;
    }
    if (signal.aborted) {
      endBody();
      throw signal.reason;
    }
    watchdog.arm();
    if (!NDJSON_TYPE.test(response.headers.get("content-type") ?? "")) return await plainAnswer(response);
    return await records(response, events, watchdog);
  } catch (error) {
    // Whatever a stop made the transport throw, the caller sees the reason it stopped for.
    if (signal.aborted) throw signal.reason;
    throw asTruncation(error, response);
  } finally {
    watchdog.stop();
    signal.removeEventListener("abort", endBody);
  }
}

function streamOf(client: RpcTransport): NonNullable<RpcTransport["stream"]> {
  const stream = client.stream;
  if (typeof stream !== "function") {
    throw new TypeError("xserver: this RPC transport has no stream(path, options), which $stream calls need; use an HttpClient");
  }
  return stream.bind(client);
}

/** Reads the records up to the terminal one; events go to the queue, pings only wake the watchdog. */
async function records(response: StreamResponse, events: EventQueue<unknown>, watchdog: Watchdog): Promise<unknown> {
  for await (const record of response.lines()) {
    // Also per record, for a transport of the page's own that never calls onChunk.
    watchdog.arm();
    if (!isRecord(record)) continue;
    if (Object.prototype.hasOwnProperty.call(record, "event")) events.push(record.event);
    // Leaving the loop cancels the rest of the body, which releases the connection.
    else if (record.done === true) return terminal(record, response);
  }
  throw new StreamError("RPC_STREAM_TRUNCATED", `POST ${response.url}: the stream ended before its terminal record`, {
    url: response.url,
    method: "POST",
  });
}

function terminal(record: Record<string, unknown>, response: StreamResponse): unknown {
  if (record.ok === true) return record.result ?? null;
  throw new HttpError({
    status: typeof record.status === "number" && record.status > 0 ? record.status : 500,
    message: typeof record.error === "string" && record.error !== "" ? record.error : `POST ${response.url} failed`,
    code: typeof record.code === "string" && record.code !== "" ? record.code : "RPC_INTERNAL_ERROR",
    details: isRecord(record.details) ? record.details : undefined,
    body: record,
    url: response.url,
    method: "POST",
  });
}

/**
 * A 2xx that is not NDJSON (a server or proxy that answered the buffered way) counts only
 * as the buffered answer `{ result }`: anything else, an HTML page say, is not a success.
 */
async function plainAnswer(response: StreamResponse): Promise<unknown> {
  const text = await response.text();
  let parsed: unknown;
  try {
    parsed = JSON.parse(text) as unknown;
  } catch {
    parsed = undefined;
  }
  if (isRecord(parsed) && Object.prototype.hasOwnProperty.call(parsed, "result")) return parsed.result ?? null;
  const type = response.headers.get("content-type") ?? "no content type";
  const message = `POST ${response.url} answered ${response.status} (${type}) with neither an NDJSON stream nor a JSON { result }`;
  throw new ResponseParseError("POST", response.url, response.status, text, undefined, message);
}

/** A body cut off mid-record or mid-transfer is a truncated stream like one without its terminal record. */
function asTruncation(error: unknown, response: StreamResponse | undefined): unknown {
  if (response === undefined) return error;
  const code = (error as { code?: unknown } | null)?.code;
  if (code !== "CLIENT_STREAM_TRUNCATED" && !(error instanceof TypeError)) return error;
  return new StreamError("RPC_STREAM_TRUNCATED", `POST ${response.url}: the stream was cut off before its terminal record`, {
    url: response.url,
    method: "POST",
    cause: error,
  });
}

/** The transport's per-attempt timer ran out: the server sent no headers for stallTimeoutMs. */
function isTimeout(error: unknown): boolean {
  return (error as { code?: unknown } | null)?.code === "CLIENT_TIMEOUT";
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
