/**
 * When and how long HttpClient waits before trying again (docs/guides/browser.md,
 * "Retries and timeouts"): 429 and 5xx, exponential backoff with full jitter (base
 * 300 ms, factor 2, cap 10 s), `Retry-After` in seconds or HTTP-date form capped at
 * 60 s. POST and PATCH are retried only on 429 and 503, the answers that say the server
 * did not run them (not a 503 SESSION_STORE_UNAVAILABLE); network errors only for
 * idempotent methods, where sending twice is harmless. A rate limit's 429 that asks for a
 * longer wait than the cap is not retried at all.
 */

import { parseHttpDate } from "./http-date.js";

export const BACKOFF_BASE_MS = 300;
export const BACKOFF_FACTOR = 2;
export const BACKOFF_CAP_MS = 10_000;
export const RETRY_AFTER_CAP_MS = 60_000;

const IDEMPOTENT = new Set(["GET", "HEAD", "PUT", "DELETE", "OPTIONS"]);

export function isIdempotent(method: string): boolean {
  return IDEMPOTENT.has(method);
}

/**
 * The one 503 that does not say "not run": a session store that could not be reached may
 * have failed a method halfway through, or only its save at the end.
 */
const MAY_HAVE_RUN = "SESSION_STORE_UNAVAILABLE";

export function isRetryableStatus(status: number, method: string, code?: string): boolean {
  const notIdempotent = method === "POST" || method === "PATCH";
  if (status === 429) return true;
  if (status === 503) return !(notIdempotent && code === MAY_HAVE_RUN);
  if (notIdempotent) return false;
  return status >= 500 && status <= 599;
}

/** Full jitter: a uniform wait between 0 and the capped exponential step. */
export function backoffDelay(retryIndex: number, random: () => number): number {
  const step = Math.min(BACKOFF_CAP_MS, BACKOFF_BASE_MS * BACKOFF_FACTOR ** retryIndex);
  const r = Math.min(Math.max(random(), 0), 1);
  return Math.round(step * r);
}

/**
 * The wait a `Retry-After` header asks for, in ms, or undefined when it is absent or not
 * a valid value (the caller then falls back to backoff). Valid values are delay-seconds
 * (digits only: `-1`, `1.5`, `+5`, `1e3` are not) and HTTP-dates; `0` or a date in the
 * past means now. A value the server did not mean as a wait must not become "at once".
 */
export function retryAfterDelay(header: string | null, now: number): number | undefined {
  const wait = requestedWait(header, now);
  return wait === undefined ? undefined : Math.min(wait, RETRY_AFTER_CAP_MS);
}

/** The wait `Retry-After` asks for, uncapped. */
function requestedWait(header: string | null, now: number): number | undefined {
  if (header === null) return undefined;
  const value = header.trim();
  if (/^\d+$/.test(value)) return Number(value) * 1000;
  const date = parseHttpDate(value, now);
  if (date === undefined) return undefined;
  return Math.max(date - now, 0);
}

/** The server's rate limits: their `Retry-After` is when a call is admitted again, and not before. */
const RATE_LIMITED = new Set(["RPC_RATE_LIMITED", "PROXY_RATE_LIMITED"]);

/**
 * True for a rate limit's refusal that asks for longer than the cap: a retry after the
 * capped wait would be refused for sure, so the caller gets the 429 at once rather than
 * after a minute of hanging.
 */
export function refusedBeyondCap(code: string | undefined, header: string | null, now: number): boolean {
  if (code === undefined || !RATE_LIMITED.has(code)) return false;
  const wait = requestedWait(header, now);
  return wait !== undefined && wait > RETRY_AFTER_CAP_MS;
}

/** Resolves after `ms`, or rejects with the signal's reason as soon as it aborts. */
export function abortableSleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, Math.max(0, ms));
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}
