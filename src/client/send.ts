/**
 * One request pass: attempts with a per-attempt timeout, retried as
 * docs/guides/browser.md "Retries and timeouts" says. The timer runs until `readOk` has
 * finished with the OK response: `request()` reads the whole body there, so a server that
 * sends headers and then stalls still times out, while `stream()` hands the response on
 * at once and owns the body's lifetime itself.
 */
import { readErrorBody } from "./body.js";
import { httpErrorFrom, TimeoutError, type HttpError } from "./errors.js";
import { backoffDelay, isIdempotent, isRetryableStatus, refusedBeyondCap, retryAfterDelay } from "./retry.js";
import { xhrFetch, type UploadProgress } from "./xhr-fetch.js";

export interface Timing {
  /** Waits between attempts; must reject with the signal's reason when it aborts. */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
  /** The jitter source, a number in [0, 1). */
  random(): number;
}

export interface Attempt {
  url: string;
  method: string;
  headers: Headers;
  body: BodyInit | undefined;
  stream: boolean;
  timeoutMs: number;
  signal: AbortSignal | undefined;
  /** Sends with XMLHttpRequest, which reports upload progress (a stream body still goes with fetch). */
  onUploadProgress?: UploadProgress | undefined;
}

/** What an attempt makes of an OK response, while the attempt's timer still runs. */
export type ReadOk<T> = (response: Response) => Promise<T>;

export type Outcome<T = unknown> = { ok: true; value: T } | { ok: false; error: HttpError; retryAfter: string | null };

export async function sendWithRetries<T>(attempt: Attempt, readOk: ReadOk<T>, maxRetries: number, timing: Timing): Promise<Outcome<T>> {
  for (let retry = 0; ; retry += 1) {
    let outcome: Outcome<T>;
    try {
      outcome = await sendOnce(attempt, readOk);
    } catch (error) {
      // fetch reports a network failure as a TypeError; whether the server saw the
      // request is unknown, so only a method that may run twice is sent again.
      if (!(error instanceof TypeError) || !isIdempotent(attempt.method) || retry >= maxRetries) throw error;
      await pause(backoffDelay(retry, () => timing.random()), attempt.signal, timing);
      continue;
    }
    if (outcome.ok || retry >= maxRetries || !isRetryableStatus(outcome.error.status, attempt.method, outcome.error.code)) return outcome;
    if (refusedBeyondCap(outcome.error.code, outcome.retryAfter, Date.now())) return outcome;
    const delay = retryAfterDelay(outcome.retryAfter, Date.now()) ?? backoffDelay(retry, () => timing.random());
    await pause(delay, attempt.signal, timing);
  }
}

async function pause(ms: number, signal: AbortSignal | undefined, timing: Timing): Promise<void> {
  await timing.sleep(ms, signal);
  if (signal?.aborted) throw signal.reason;
}

async function sendOnce<T>(attempt: Attempt, readOk: ReadOk<T>): Promise<Outcome<T>> {
  const { url, method, signal, timeoutMs } = attempt;
  if (signal?.aborted) throw signal.reason;
  const controller = new AbortController();
  let timedOut = false;
  const timer =
    timeoutMs > 0 && Number.isFinite(timeoutMs)
      ? setTimeout(() => {
          timedOut = true;
          controller.abort(new TimeoutError(method, url, timeoutMs));
        }, timeoutMs)
      : undefined;
  const onCallerAbort = (): void => controller.abort(signal?.reason);
  signal?.addEventListener("abort", onCallerAbort, { once: true });
  try {
    const init: RequestInit & { duplex?: "half" } = {
      method,
      headers: attempt.headers,
      body: attempt.body,
      signal: controller.signal,
      credentials: "same-origin",
    };
    if (attempt.stream) init.duplex = "half";
    const response =
      attempt.onUploadProgress && !attempt.stream
        ? await xhrFetch(url, { method, headers: attempt.headers, body: attempt.body, signal: controller.signal }, attempt.onUploadProgress)
        : await globalThis.fetch(url, init);
    if (response.ok) return { ok: true, value: await readOk(response) };
    const body = await readErrorBody(response, method);
    return { ok: false, error: httpErrorFrom(response, body, method, url), retryAfter: response.headers.get("retry-after") };
  } catch (error) {
    // The caller's abort wins over our timer: it is what the caller asked for.
    if (signal?.aborted) throw signal.reason;
    if (timedOut) throw new TimeoutError(method, url, timeoutMs);
    throw error;
  } finally {
    if (timer !== undefined) clearTimeout(timer);
    signal?.removeEventListener("abort", onCallerAbort);
  }
}
