/**
 * The viewer page: every HTML page is served with a session cookie (issued when the
 * request has no valid one) and a bootstrap injected before `</head>` that sets
 * `window.APP_CSRF_TOKEN` and loads the browser client, each script of the page carrying
 * the response's CSP nonce (src/http/security-headers.ts).
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

/**
 * Comments, and the raw text of the elements whose content is never markup: a "<script"
 * in them is text, not a tag, and must not get an attribute.
 */
const SKIPPED_OR_SCRIPT = /<!--[\s\S]*?(?:-->|$)|<(script|style|textarea|title)\b(?:[^>"']|"[^"]*"|'[^']*')*>[\s\S]*?(?:<\/\1|$)/gi;
const SCRIPT_TAG_NAME = "<script".length;

/**
 * A page's HTML cut where the server writes into it: the bootstrap's place, and after each
 * `<script` of the page's own script elements, where the response's CSP nonce goes. The
 * page file is the app's own and trusted as written, so its scripts, inline ones too, run
 * under the nonce policy without the author naming them; scripts added later by the page's
 * code (or by an attacker's injection) get no nonce.
 */
export class PageTemplate {
  /** Text, with a slot between each two pieces: `slots[i]` goes after `pieces[i]`. */
  readonly #pieces: readonly string[];
  readonly #slots: ReadonlyArray<"nonce" | "bootstrap">;

  private constructor(pieces: string[], slots: Array<"nonce" | "bootstrap">) {
    this.#pieces = pieces;
    this.#slots = slots;
  }

  static parse(html: string): PageTemplate {
    const cuts: Array<{ at: number; slot: "nonce" | "bootstrap" }> = [];
    for (const match of html.matchAll(SKIPPED_OR_SCRIPT)) {
      if (match[1]?.toLowerCase() === "script") cuts.push({ at: match.index + SCRIPT_TAG_NAME, slot: "nonce" });
    }
    cuts.push({ at: bootstrapPlace(html), slot: "bootstrap" });
    cuts.sort((a, b) => a.at - b.at);
    const pieces: string[] = [];
    let from = 0;
    for (const cut of cuts) {
      pieces.push(html.slice(from, cut.at));
      from = cut.at;
    }
    pieces.push(html.slice(from));
    return new PageTemplate(pieces, cuts.map((cut) => cut.slot));
  }

  /** The page with its bootstrap, every script carrying `nonce` when one is given. */
  render(csrfToken: string, nonce: string | null): string {
    const attribute = nonce === null ? "" : ` nonce="${nonce}"`;
    // JSON.stringify gives a string literal; escaping "<" keeps "</script>" from ending the tag.
    const literal = JSON.stringify(csrfToken).replace(/</g, "\\u003c");
    const bootstrap = `<script${attribute}>window.APP_CSRF_TOKEN = ${literal};</script><script${attribute} src="${CLIENT_SCRIPT_PATH}"></script>`;
    let html = this.#pieces[0]!;
    for (let i = 0; i < this.#slots.length; i += 1) html += (this.#slots[i] === "bootstrap" ? bootstrap : attribute) + this.#pieces[i + 1]!;
    return html;
  }
}

/** Before `</head>`; else right after `<body>`; else first. */
function bootstrapPlace(html: string): number {
  const head = html.search(/<\/head\s*>/i);
  if (head !== -1) return head;
  const body = html.search(/<body[^>]*>/i);
  if (body !== -1) return html.indexOf(">", body) + 1;
  return 0;
}

export function injectBootstrap(html: string, csrfToken: string, nonce: string | null = null): string {
  return PageTemplate.parse(html).render(csrfToken, nonce);
}
