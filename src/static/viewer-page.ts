/**
 * The viewer page: every HTML page is served with a session cookie (issued when the
 * request has no valid one) and a bootstrap injected before `</head>` that sets
 * `window.APP_CSRF_TOKEN` and loads the browser client.
 */
import type { FastifyReply, FastifyRequest } from "fastify";
import { requestProtocol } from "../auth/origin.js";
import type { Session, SessionSigner } from "../auth/session.js";
import { readSessionCookie, sessionSetCookie } from "../auth/session-cookie.js";

export const CLIENT_SCRIPT_PATH = "/__app/client.js";

/** The session of this request, issuing one (and its cookie) when there is none. */
export function ensureSession(
  request: FastifyRequest,
  reply: FastifyReply,
  sessions: SessionSigner,
  trustProxy: boolean,
): Session {
  const existing = sessions.verify(readSessionCookie(request.headers));
  if (existing) return existing;
  const { token, session } = sessions.issue();
  const encrypted = Boolean((request.raw.socket as { encrypted?: boolean }).encrypted);
  reply.header("set-cookie", sessionSetCookie(token, sessions.ttlSec, requestProtocol(request.headers, encrypted, trustProxy) === "https"));
  return session;
}

export function injectBootstrap(html: string, csrfToken: string): string {
  // JSON.stringify gives a string literal; escaping "<" keeps "</script>" from ending the tag.
  const literal = JSON.stringify(csrfToken).replace(/</g, "\\u003c");
  const snippet = `<script>window.APP_CSRF_TOKEN = ${literal};</script><script src="${CLIENT_SCRIPT_PATH}"></script>`;
  const at = html.search(/<\/head\s*>/i);
  if (at !== -1) return html.slice(0, at) + snippet + html.slice(at);
  const body = html.search(/<body[^>]*>/i);
  if (body !== -1) {
    const end = html.indexOf(">", body) + 1;
    return html.slice(0, end) + snippet + html.slice(end);
  }
  return snippet + html;
}
