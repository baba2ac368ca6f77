/**
 * Session and CSRF checks for RPC calls and the proxy, with the two HMACs of each check
 * remembered per cookie value. A page makes many calls with one cookie; recomputing both
 * MACs on every call was a quarter of the CPU time of a proxied request and about as much
 * of an RPC call. Only a cookie that passed
 * `SessionSigner.verify` is remembered, its expiry is checked on every use, and the CSRF
 * header is still compared in constant time.
 */
import { safeEqual, type Session, type SessionSigner } from "./session.js";

const MAX_ENTRIES = 10_000;

export interface SessionEntry {
  session: Session;
  csrf: string;
}

export class SessionCheck {
  readonly #sessions: SessionSigner;
  readonly #entries = new Map<string, SessionEntry>();

  constructor(sessions: SessionSigner) {
    this.#sessions = sessions;
  }

  /** The session of a valid, unexpired cookie value, with its CSRF token; null otherwise. */
  session(cookie: string | undefined, nowMs = Date.now()): SessionEntry | null {
    if (!cookie) return null;
    let entry = this.#entries.get(cookie);
    if (entry === undefined) {
      const session = this.#sessions.verify(cookie, nowMs);
      if (!session) return null;
      entry = { session, csrf: this.#sessions.csrfToken(session) };
      // Oldest first out: a Map iterates in insertion order.
      if (this.#entries.size >= MAX_ENTRIES) this.#entries.delete(this.#entries.keys().next().value!);
      this.#entries.set(cookie, entry);
    }
    if (entry.session.expiresAt * 1000 <= nowMs) {
      this.#entries.delete(cookie);
      return null;
    }
    return entry;
  }

  static csrfMatches(entry: SessionEntry, header: string | string[] | undefined): boolean {
    return typeof header === "string" && safeEqual(header, entry.csrf);
  }
}
