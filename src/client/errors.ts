/**
 * The errors a browser caller can receive from HttpClient, each with a stable `code`
 * so that callers tell failures apart without matching messages:
 *
 * - `HttpError`: the server answered with a non-2xx status. `code` comes from a JSON
 *   `{ error, code, details }` body (the server's RPC and proxy errors) and is
 *   `HTTP_<status>` when the body carries none.
 * - `TimeoutError` (`CLIENT_TIMEOUT`): one attempt took longer than `timeoutMs`.
 * - `ResponseParseError` (`CLIENT_BAD_RESPONSE`): a 2xx body that `expect: "json"`
 *   (or a JSON content type under `expect: "auto"`) could not parse, or a malformed
 *   line of a stream.
 * - `StreamError`: a stream that ended or stopped before its last record
 *   (`CLIENT_STREAM_TRUNCATED`, `RPC_STREAM_TRUNCATED`, `RPC_STREAM_STALLED`).
 *
 * A caller's own abort rejects with the signal's reason (a DOMException named
 * `AbortError` unless the caller chose another), and a network failure with the
 * `TypeError` fetch raised; neither is wrapped, so `err.name` checks keep working.
 */

export class HttpError extends Error {
  readonly status: number;
  readonly code: string;
  readonly details: Record<string, unknown>;
  /** The parsed JSON body when the answer was JSON, otherwise its text ("" when empty). */
  readonly body: unknown;
  readonly url: string;
  readonly method: string;

  constructor(init: {
    status: number;
    message: string;
    code?: string | undefined;
    details?: Record<string, unknown> | undefined;
    body?: unknown;
    url: string;
    method: string;
  }) {
    super(init.message);
    this.name = "HttpError";
    this.status = init.status;
    this.code = init.code ?? `HTTP_${init.status}`;
    this.details = init.details ?? {};
    this.body = init.body;
    this.url = init.url;
    this.method = init.method;
  }
}

export class TimeoutError extends Error {
  readonly code = "CLIENT_TIMEOUT";
  readonly timeoutMs: number;
  readonly url: string;
  readonly method: string;

  constructor(method: string, url: string, timeoutMs: number) {
    super(`${method} ${url} timed out after ${timeoutMs} ms`);
    this.name = "TimeoutError";
    this.timeoutMs = timeoutMs;
    this.url = url;
    this.method = method;
  }
}

export class ResponseParseError extends Error {
  readonly code = "CLIENT_BAD_RESPONSE";
  readonly status: number;
  /** The raw text that failed to parse. */
  readonly body: string;
  readonly url: string;
  readonly method: string;

  constructor(method: string, url: string, status: number, body: string, cause: unknown, message?: string) {
    super(message ?? `${method} ${url} answered ${status} with a body that is not valid JSON`, { cause });
    this.name = "ResponseParseError";
    this.status = status;
    this.body = body;
    this.url = url;
    this.method = method;
  }
}

export type StreamErrorCode = "CLIENT_STREAM_TRUNCATED" | "RPC_STREAM_TRUNCATED" | "RPC_STREAM_STALLED";

/**
 * A stream that did not reach its end: the connection closed mid-record
 * (`CLIENT_STREAM_TRUNCATED`), an RPC stream ended without its terminal record
 * (`RPC_STREAM_TRUNCATED`), or went silent for longer than `stallTimeoutMs`
 * (`RPC_STREAM_STALLED`). Whatever arrived before is never taken for a success.
 */
export class StreamError extends Error {
  readonly code: StreamErrorCode;
  readonly url: string;
  readonly method: string;

  constructor(code: StreamErrorCode, message: string, init: { url: string; method: string; cause?: unknown }) {
    super(message, init.cause === undefined ? undefined : { cause: init.cause });
    this.name = "StreamError";
    this.code = code;
    this.url = init.url;
    this.method = init.method;
  }
}

/** Builds the HttpError for a non-2xx answer from its already-read body. */
export function httpErrorFrom(
  response: Response,
  body: unknown,
  method: string,
  url: string,
): HttpError {
  let message = `${method} ${url} failed with HTTP ${response.status}${response.statusText ? ` ${response.statusText}` : ""}`;
  let code: string | undefined;
  let details: Record<string, unknown> | undefined;
  if (isPlainRecord(body)) {
    if (typeof body.error === "string" && body.error !== "") message = body.error;
    if (typeof body.code === "string" && body.code !== "") code = body.code;
    if (isPlainRecord(body.details)) details = body.details;
  }
  return new HttpError({ status: response.status, message, code, details, body, url, method });
}

function isPlainRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
