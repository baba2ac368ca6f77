/**
 * Origin check for session-bound calls (README "Cross-origin calls").
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

function firstValue(value: string | string[] | undefined): string | undefined {
  const first = Array.isArray(value) ? value[0] : value;
  return first?.split(",")[0]?.trim() || undefined;
}
