/**
 * Origin check for session-bound calls (docs/guides/server-methods.md "Cross-origin calls").
 * SameSite=Lax already keeps the cookie off cross-site POSTs in current browsers; this
 * refuses the call outright when the browser says it came from elsewhere, which also
 * covers same-site sibling origins and older browsers.
 */
import type { IncomingHttpHeaders } from "node:http";

export interface OriginPolicy {
  allowedOrigins: ReadonlySet<string>;
  trustProxy: boolean;
}

export function requestProtocol(headers: IncomingHttpHeaders, encrypted: boolean, trustProxy: boolean): "http" | "https" {
  if (encrypted) return "https";
  if (trustProxy) {
    const forwarded = headers["x-forwarded-proto"];
    const first = (Array.isArray(forwarded) ? forwarded[0] : forwarded)?.split(",")[0]?.trim().toLowerCase();
    if (first === "https") return "https";
  }
  return "http";
}

/** The origin this request reached the server at: Host (X-Forwarded-Host/-Proto only under `trustProxy`). */
export function requestOrigin(headers: IncomingHttpHeaders, encrypted: boolean, trustProxy: boolean): string {
  const host = trustProxy ? (firstValue(headers["x-forwarded-host"]) ?? headers.host) : headers.host;
  return `${requestProtocol(headers, encrypted, trustProxy)}://${host ?? ""}`;
}

/** True when the call may proceed. */
export function originAllowed(headers: IncomingHttpHeaders, encrypted: boolean, policy: OriginPolicy): boolean {
  const origin = headers.origin;
  const fetchSite = headers["sec-fetch-site"];
  if (origin !== undefined) {
    if (policy.allowedOrigins.has(origin)) return true;
    const own = requestOrigin(headers, encrypted, policy.trustProxy);
    // "null" (sandboxed frames, file: pages) never equals a real origin and is refused.
    if (origin.toLowerCase() !== own.toLowerCase()) return false;
  }
  return fetchSite !== "cross-site";
}

/**
 * Why `originAllowed` refused, for the log only (the answer stays the code's own): both
 * origins side by side show at once the usual cause, a proxy that drops the port
 * (docs/guides/deployment.md "nginx"). Both come from request headers, so they are cut short
 * and stripped of control characters before they reach a log line.
 */
export class OriginMismatch extends Error {
  readonly origin: string | null;
  readonly expectedOrigin: string;
  readonly fetchSite: string | null;

  constructor(headers: IncomingHttpHeaders, encrypted: boolean, policy: OriginPolicy) {
    const origin = headers.origin === undefined ? null : loggable(headers.origin);
    const expectedOrigin = loggable(requestOrigin(headers, encrypted, policy.trustProxy));
    const fetchSite = typeof headers["sec-fetch-site"] === "string" ? loggable(headers["sec-fetch-site"]) : null;
    super(
      origin !== null && origin.toLowerCase() !== expectedOrigin.toLowerCase()
        ? `Origin ${origin} is not this server's origin ${expectedOrigin} (from ${policy.trustProxy ? "X-Forwarded-Proto/-Host" : "Host"}) nor listed in server.allowedOrigins`
        : `Sec-Fetch-Site: cross-site, and the Origin is not listed in server.allowedOrigins`,
    );
    this.name = "OriginMismatch";
    this.origin = origin;
    this.expectedOrigin = expectedOrigin;
    this.fetchSite = fetchSite;
  }
}

/** Refusal reasons are expected outcomes: no stack to capture (as errorOf). */
export function originMismatch(headers: IncomingHttpHeaders, encrypted: boolean, policy: OriginPolicy): OriginMismatch {
  const limit = Error.stackTraceLimit;
  Error.stackTraceLimit = 0;
  try {
    return new OriginMismatch(headers, encrypted, policy);
  } finally {
    Error.stackTraceLimit = limit;
  }
}

const LOGGED_MAX = 100;

/** A client-supplied header value fit for a log line: no control characters, at most 100 characters. */
function loggable(value: string): string {
  // eslint-disable-next-line no-control-regex
  const clean = value.replace(/[\u0000-\u001f\u007f]/g, "\uFFFD");
  return clean.length > LOGGED_MAX ? `${clean.slice(0, LOGGED_MAX)}…` : clean;
}

function firstValue(value: string | string[] | undefined): string | undefined {
  const first = Array.isArray(value) ? value[0] : value;
  return first?.split(",")[0]?.trim() || undefined;
}
