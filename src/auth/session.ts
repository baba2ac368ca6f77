/**
 * Stateless viewer sessions (docs/guides/server-methods.md "Exposing a method: authentication"):
 * `v1.<id>.<expiresAtSec>.<mac>` where
 * mac = HMAC-SHA256(secret, "session:v1.<id>.<expiresAtSec>"). Any process holding the
 * same secret accepts the token, so cluster workers and several hosts share sessions
 * without a store. The CSRF token is HMAC(secret, "csrf:<id>"): it needs no storage either
 * and a leaked CSRF token is useless without the cookie of the same session.
 */
import { createHmac, createSecretKey, randomBytes, timingSafeEqual, type KeyObject } from "node:crypto";
import { StartupError } from "../errors/http-error.js";

export const SESSION_COOKIE = "app_session";
export const MIN_SECRET_BYTES = 32;

export interface Session {
  id: string;
  /** Seconds since the epoch. */
  expiresAt: number;
  /** Milliseconds since the epoch: the expiry less the lifetime sessions are issued with. */
  createdAt: number;
}

export class SessionSigner {
  /**
   * A KeyObject, not the secret's bytes: Node 24 asks whether an HMAC key is a KeyObject or
   * a CryptoKey by reading a private slot natively, and for anything else that read throws
   * and is caught, twice per HMAC. Under a server's deep stack those two throws cost about
   * 20 µs per HMAC, a third of a bare route's CPU time in a profile (`npm run bench`,
   * section "rpc", on Node 24.21); a KeyObject answers from its cached slot.
   */
  readonly #secret: KeyObject;
  readonly #ttlSec: number;

  constructor(secret: string | Buffer, ttlSec: number) {
    this.#secret = createSecretKey(Buffer.isBuffer(secret) ? secret : Buffer.from(secret, "utf8"));
    this.#ttlSec = ttlSec;
  }

  get ttlSec(): number {
    return this.#ttlSec;
  }

  issue(nowMs = Date.now()): { token: string; session: Session } {
    const id = randomBytes(18).toString("base64url");
    const expiresAt = Math.floor(nowMs / 1000) + this.#ttlSec;
    const body = `v1.${id}.${expiresAt}`;
    return { token: `${body}.${this.#mac("session:" + body)}`, session: this.#session(id, expiresAt) };
  }

  /** The session a cookie value stands for, or null when it is malformed, forged or expired. */
  verify(token: string | undefined, nowMs = Date.now()): Session | null {
    if (!token || token.length > 256) return null;
    const parts = token.split(".");
    if (parts.length !== 4 || parts[0] !== "v1") return null;
    const [, id, expires, mac] = parts as [string, string, string, string];
    if (!/^[A-Za-z0-9_-]{16,64}$/.test(id) || !/^\d{1,12}$/.test(expires)) return null;
    if (!safeEqual(mac, this.#mac(`session:v1.${id}.${expires}`))) return null;
    const expiresAt = Number(expires);
    if (expiresAt * 1000 <= nowMs) return null;
    return this.#session(id, expiresAt);
  }

  #session(id: string, expiresAt: number): Session {
    return { id, expiresAt, createdAt: (expiresAt - this.#ttlSec) * 1000 };
  }

  csrfToken(session: Session): string {
    return this.#mac("csrf:" + session.id);
  }

  checkCsrf(session: Session, header: string | string[] | undefined): boolean {
    return typeof header === "string" && safeEqual(header, this.csrfToken(session));
  }

  #mac(data: string): string {
    return createHmac("sha256", this.#secret).update(data).digest("base64url");
  }
}

/** Constant-time string comparison; unequal lengths compare a dummy so timing stays flat. */
export function safeEqual(given: string, expected: string): boolean {
  const a = Buffer.from(given, "utf8");
  const b = Buffer.from(expected, "utf8");
  if (a.length !== b.length) {
    timingSafeEqual(b, b);
    return false;
  }
  return timingSafeEqual(a, b);
}

/**
 * The session secret: `APP_SESSION_SECRET` (at least 32 bytes), else a random one with a
 * warning that sessions end at restart. The cluster master hands its random secret to
 * workers through the same variable.
 */
export function sessionSecretFrom(env: NodeJS.ProcessEnv): { secret: string; generated: boolean } {
  const configured = env.APP_SESSION_SECRET;
  if (configured !== undefined && configured !== "") {
    if (Buffer.byteLength(configured, "utf8") < MIN_SECRET_BYTES) {
      throw new StartupError("STARTUP_WEAK_SECRET", `APP_SESSION_SECRET must be at least ${MIN_SECRET_BYTES} bytes long`);
    }
    return { secret: configured, generated: false };
  }
  return { secret: randomBytes(32).toString("base64url"), generated: true };
}
