/**
 * Reading and writing the one cookie this server uses, `app_session`. Hand-written rather
 * than @fastify/cookie: that plugin parses every cookie of every request in a hook and
 * wraps every reply, which cost about a sixth of an RPC call's CPU time, while the
 * gateway needs one value by name. The token is base64url and dots, so it never needs
 * percent-encoding either way.
 */
import type { IncomingHttpHeaders } from "node:http";
import { SESSION_COOKIE } from "./session.js";

const PREFIX = `${SESSION_COOKIE}=`;

/** The first `app_session` value in the Cookie header, or undefined. */
export function readSessionCookie(headers: IncomingHttpHeaders): string | undefined {
  const header = headers.cookie;
  if (header === undefined) return undefined;
  let start = 0;
  while (start < header.length) {
    let end = header.indexOf(";", start);
    if (end === -1) end = header.length;
    const pair = header.slice(start, end).trim();
    if (pair.startsWith(PREFIX)) return unquoted(pair.slice(PREFIX.length));
    start = end + 1;
  }
  return undefined;
}

/** A cookie value in double quotes, as RFC 6265 allows, without them. */
function unquoted(value: string): string {
  return value.length >= 2 && value.charCodeAt(0) === 0x22 && value.charCodeAt(value.length - 1) === 0x22 ? value.slice(1, -1) : value;
}

/** The Set-Cookie value for a new session: HttpOnly, SameSite=Lax, Path=/, Secure on https. */
export function sessionSetCookie(token: string, maxAgeSec: number, secure: boolean): string {
  return `${PREFIX}${token}; Max-Age=${maxAgeSec}; Path=/; HttpOnly; SameSite=Lax${secure ? "; Secure" : ""}`;
}
