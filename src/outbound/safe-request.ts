/**
 * `safeRequest(url, init)`: the shape of xOpat's outbound helper (node:http style: a plain
 * header object, a body fully read before the promise resolves) over the same guard as
 * `safeFetch` (docs/guides/outbound-guard.md), so xOpat plugins run unchanged. Nothing here
 * touches DNS or sockets: validation, the pinned connection, the refusal of redirects and
 * the deadline are all `safeFetch`'s.
 */
import type { IncomingHttpHeaders } from "node:http";
import type { Response } from "undici";
import { UpstreamResponseTooLargeError, UpstreamTimeoutError } from "./errors.js";
import { defaultOutboundGuard, type OutboundGuard } from "./guard.js";

export interface SafeRequestInit {
  /** Default `GET`. */
  method?: string;
  /** Names in any case; an array value sends the header once per item. */
  headers?: Record<string, string | number | readonly string[] | undefined>;
  body?: Buffer | Uint8Array | string | null;
  /**
   * One deadline for the whole call: DNS, connect, headers and reading the whole body (not
   * an idle timeout, so a large download must fit in it). Default: the guard's
   * (`server.outbound.timeoutMs`, 30 s).
   */
  timeoutMs?: number;
  signal?: AbortSignal | null;
  /** The most body bytes buffered; a longer answer rejects. Default 16 MiB. */
  maxResponseBytes?: number;
}

/** The answer, its body already read. The body methods return promises, as fetch's do. */
export interface SafeResponse {
  readonly status: number;
  /** True for 2xx. Other statuses resolve too (3xx excepted: redirects reject). */
  readonly ok: boolean;
  /** Lower-case names; every value a string but `set-cookie`, an array as Node gives it. */
  readonly headers: IncomingHttpHeaders;
  /** The body's bytes. */
  arrayBuffer(): Promise<Buffer>;
  /** The body as UTF-8. */
  text(): Promise<string>;
  /** The body parsed as JSON; an empty body is `{}`. */
  json(): Promise<unknown>;
}

export type SafeRequest = (url: string | URL, init?: SafeRequestInit) => Promise<SafeResponse>;

export const DEFAULT_MAX_RESPONSE_BYTES = 16 * 1024 * 1024;

/**
 * Framing is the adapter's: it sends the body it is given, whole, and undici writes its
 * length. A caller's own Content-Length (node:http code often sets one) could disagree
 * with the bytes (a string's length is not its UTF-8 size), and undici refuses the rest.
 */
const FRAMING_HEADERS = new Set(["content-length", "transfer-encoding", "connection", "keep-alive"]);

/** `safeRequest` over a guard of its own (tests, or a part with its own allow list). */
export function createSafeRequest(guard: Pick<OutboundGuard, "safeFetch" | "timeoutMs">): SafeRequest {
  return (url, init = {}) => request(guard, url, init);
}

/** Over the process-wide guard, whatever `server.outbound` configured it with. */
export const safeRequest: SafeRequest = (url, init = {}) => request(defaultOutboundGuard(), url, init);

async function request(guard: Pick<OutboundGuard, "safeFetch" | "timeoutMs">, url: string | URL, init: SafeRequestInit): Promise<SafeResponse> {
  const maxResponseBytes = checkLimit(init.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES);
  const timeoutMs = init.timeoutMs ?? guard.timeoutMs;
  const signal = init.signal ?? undefined;
  try {
    const response = await guard.safeFetch(url, {
      method: init.method ?? "GET",
      headers: headerList(init.headers ?? {}),
      body: init.body ?? null,
      signal,
      timeoutMs,
    });
    const body = await readBody(response, maxResponseBytes);
    return answer(response, body);
  } catch (error) {
    // The caller's own abort is theirs to recognise, whatever undici wrapped it in.
    if (signal?.aborted) throw signal.reason;
    if (error instanceof DOMException && error.name === "TimeoutError") throw new UpstreamTimeoutError(timeoutMs, { cause: error });
    throw error;
  }
}

function checkLimit(value: number): number {
  if (typeof value !== "number" || Number.isNaN(value) || value <= 0) {
    throw new TypeError(`init.maxResponseBytes must be a positive number of bytes, got ${String(value)}`);
  }
  return value;
}

function headerList(headers: NonNullable<SafeRequestInit["headers"]>): Array<[string, string]> {
  const list: Array<[string, string]> = [];
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined || FRAMING_HEADERS.has(name.toLowerCase())) continue;
    if (Array.isArray(value)) for (const item of value) list.push([name, String(item)]);
    else list.push([name, String(value)]);
  }
  return list;
}

/** The whole body, refused as soon as it passes the cap (before reading, when its length says so). */
async function readBody(response: Response, maxResponseBytes: number): Promise<Buffer> {
  const tooLarge = () => new UpstreamResponseTooLargeError({ maxResponseBytes, status: response.status });
  // A compressed body's length says nothing of what it decodes to; only the bytes read count then.
  const declared = response.headers.has("content-encoding") ? Number.NaN : Number(response.headers.get("content-length") ?? Number.NaN);
  if (declared > maxResponseBytes) {
    await response.body?.cancel().catch(() => {});
    throw tooLarge();
  }
  const chunks: Uint8Array[] = [];
  let received = 0;
  // Leaving the loop by a throw cancels the stream, which releases the connection.
  for await (const chunk of response.body ?? []) {
    received += chunk.byteLength;
    if (received > maxResponseBytes) throw tooLarge();
    chunks.push(chunk);
  }
  return Buffer.concat(chunks, received);
}

function answer(response: Response, body: Buffer): SafeResponse {
  // Like Node's own: no prototype, so a header named `__proto__` is just a header.
  const headers: IncomingHttpHeaders = Object.create(null) as IncomingHttpHeaders;
  for (const [name, value] of response.headers) if (name !== "set-cookie") headers[name] = value;
  const cookies = response.headers.getSetCookie();
  if (cookies.length > 0) headers["set-cookie"] = cookies;
  // fetch's decoding: UTF-8, a leading byte-order mark dropped.
  const text = (): string => new TextDecoder().decode(body);
  return Object.freeze({
    status: response.status,
    ok: response.ok,
    headers,
    arrayBuffer: async () => body,
    text: async () => text(),
    json: async (): Promise<unknown> => (body.length === 0 ? {} : JSON.parse(text())),
  });
}
