/**
 * The two ways the outbound guard refuses a request. Each has a stable `code` so a
 * server method can tell them apart (and from network errors) without matching text.
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
