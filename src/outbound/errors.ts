/**
 * The two ways the outbound guard refuses a request, and the two ways `safeRequest` gives
 * up on one. Each has a stable `code` so a server method can tell them apart (and from
 * network errors) without matching text.
 */

export interface SsrfBlockedDetails {
  /**
   * Why the request was refused: `invalid-url`, `scheme`, `localhost`, `dns-failure`,
   * `unresolvable`, `invalid-address`, or the address class from `blockedReason`
   * (`loopback`, `private`, `linkLocal`, `6to4:loopback`, ...).
   */
  readonly reason: string;
  /** The offending address, when the block is about an address. */
  readonly address?: string;
  /** The parsed URL, without user name or password (they may be secrets). */
  readonly url?: string;
}

export class SsrfBlockedError extends Error {
  override readonly name = "SsrfBlockedError";
  readonly code = "SSRF_BLOCKED";
  readonly details: SsrfBlockedDetails;

  constructor(message: string, details: SsrfBlockedDetails, options?: { cause?: unknown }) {
    super(message, options);
    this.details = details;
  }
}

export interface SsrfRedirectDetails {
  readonly status: number;
  /** The `Location` header as sent, or null when the upstream sent none. */
  readonly location: string | null;
}

/**
 * A 3xx answer. Redirects are never followed: the target could be anything, including
 * an internal address, and vetting each hop is the caller's decision, not ours.
 */
export class SsrfRedirectError extends Error {
  override readonly name = "SsrfRedirectError";
  readonly code = "SSRF_REDIRECT";
  readonly details: SsrfRedirectDetails;

  constructor(details: SsrfRedirectDetails) {
    super(`Upstream answered ${details.status}; redirects are not followed`);
    this.details = details;
  }
}

/**
 * `safeRequest` ran out of time (DNS, connect, headers and the whole body share one
 * deadline). Named `TimeoutError` like the DOMException `safeFetch` rejects with, so code
 * that checks `err.name` treats both alike; the code is the one xOpat's servers use.
 */
export class UpstreamTimeoutError extends Error {
  override readonly name = "TimeoutError";
  readonly code = "UPSTREAM_TIMEOUT";
  readonly details: { readonly timeoutMs: number };

  constructor(timeoutMs: number, options?: { cause?: unknown }) {
    super(`Upstream did not answer in full within ${timeoutMs} ms`, options);
    this.details = { timeoutMs };
  }
}

/** A `safeRequest` response body over its `maxResponseBytes`: it is never buffered whole. */
export class UpstreamResponseTooLargeError extends Error {
  override readonly name = "UpstreamResponseTooLargeError";
  readonly code = "UPSTREAM_RESPONSE_TOO_LARGE";
  readonly details: { readonly maxResponseBytes: number; readonly status: number };

  constructor(details: { maxResponseBytes: number; status: number }) {
    super(`Upstream response is larger than ${details.maxResponseBytes} bytes`);
    this.details = details;
  }
}
