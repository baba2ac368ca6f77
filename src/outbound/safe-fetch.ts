import type { BodyInit, HeadersInit, RequestInit, Response } from "undici";
import { SsrfRedirectError } from "./errors.js";
import type { PinnedAgents } from "./pinned-agents.js";
import type { Undici } from "./undici-client.js";
import type { ValidatedTarget } from "./validate-url.js";

/**
 * What a caller may pass to `safeFetch`. Deliberately not undici's whole `RequestInit`:
 * `dispatcher` and `redirect` are the guard's to set, and nothing else is spread through.
 */
export interface SafeFetchInit {
  method?: string;
  headers?: HeadersInit;
  /** Strings, buffers, Blob, FormData, URLSearchParams, web or Node streams. */
  body?: BodyInit | null;
  signal?: AbortSignal | null;
  /** Overrides the guard's timeout for this call; it covers DNS, connect, headers and body. */
  timeoutMs?: number;
}

/**
 * One deadline for the whole exchange, combined with the caller's signal. A timeout
 * rejects with a DOMException named `TimeoutError` (what `AbortSignal.timeout` gives).
 */
export function deadline(callerSignal: AbortSignal | null | undefined, timeoutMs: number): AbortSignal {
  const timeout = AbortSignal.timeout(timeoutMs);
  return callerSignal ? AbortSignal.any([callerSignal, timeout]) : timeout;
}

/**
 * Settles like `work`, or rejects with the signal's reason as soon as it aborts. DNS
 * lookups cannot be cancelled, but the caller need not wait for a slow one.
 */
export function untilAborted<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(signal.reason);
    signal.addEventListener("abort", onAbort, { once: true });
    void work.then(resolve, reject).finally(() => signal.removeEventListener("abort", onAbort));
  });
}

/** Fetches a validated target over an Agent pinned to its validated addresses. */
export async function fetchPinned(
  undici: Undici,
  target: ValidatedTarget,
  init: SafeFetchInit,
  signal: AbortSignal,
  agents: PinnedAgents,
): Promise<Response> {
  const request: RequestInit = {
    method: init.method ?? "GET",
    headers: init.headers,
    body: init.body ?? null,
    signal,
    // Redirects are answered, never followed: the Location could name any host,
    // and following it would skip validation (the classic SSRF bypass).
    redirect: "manual",
    dispatcher: agents.get(undici.Agent, target.url, target.addresses),
  };
  // fetch insists on `duplex: "half"` for streamed request bodies.
  if (isStream(init.body)) request.duplex = "half";

  const response = await undici.fetch(target.url.href, request);
  if (response.status >= 300 && response.status <= 399) {
    // Release the socket before refusing, so the pool does not keep an unread body.
    await response.body?.cancel().catch(() => {});
    throw new SsrfRedirectError({ status: response.status, location: response.headers.get("location") });
  }
  return response;
}

function isStream(body: unknown): boolean {
  if (typeof body !== "object" || body === null) return false;
  return Symbol.asyncIterator in body || typeof (body as { getReader?: unknown }).getReader === "function";
}
