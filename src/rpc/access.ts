/**
 * Session, CSRF and origin: the built-in checks of the decision matrix (docs/guides/server-methods.md "Exposing
 * a method: authentication"), which run before the body is read. Verifiers come later,
 * because the context they need is named in the body.
 */
import type { FastifyRequest } from "fastify";
import { errorOf, refusalOf, type HttpError } from "../errors/http-error.js";
import { originAllowed, originMismatch, type OriginPolicy } from "../auth/origin.js";
import type { Session } from "../auth/session.js";
import { SessionCheck } from "../auth/session-cache.js";
import { readSessionCookie } from "../auth/session-cookie.js";
import type { MethodEntry } from "../discovery/registry.js";

export interface AccessResult {
  /**
   * The viewer's session, or null. For public and verifier-only methods it is given only
   * when the CSRF header and the origin check pass too: a cookie alone can ride along on
   * a forged cross-site request, so it must not identify the viewer to the method.
   */
  session: Session | null;
  /** True when `auth.public` waived every check, verifiers included. */
  isPublic: boolean;
}

/**
 * Synchronous unless `auth.public` is a function: most calls pass these checks without a
 * promise or an extra tick before the body is read. A refusal is returned, not thrown (a
 * throw was the largest single cost of a refused call: docs/reference/benchmarks.md "Refusals").
 */
export function checkAccess(
  request: FastifyRequest,
  entry: MethodEntry,
  sessions: SessionCheck,
  originPolicy: OriginPolicy,
): AccessResult | HttpError | Promise<AccessResult | HttpError> {
  const checked = sessions.session(readSessionCookie(request.headers));
  const session = checked?.session ?? null;
  const csrfOk = checked !== null && SessionCheck.csrfMatches(checked, request.headers["x-app-csrf"]);
  const originOk = originAllowed(request.headers, isEncrypted(request), originPolicy);
  const verified = csrfOk && originOk ? session : null;
  const rule = entry.policy.public;
  if (typeof rule !== "function") return decide(request, originPolicy, entry, rule === true, session, verified, csrfOk, originOk);
  const asked = rule({
    req: request.raw,
    headers: request.headers,
    session: verified ? { id: verified.id } : null,
    kind: entry.kind,
    id: entry.id,
    method: entry.name,
  });
  return Promise.resolve(asked).then((isPublic) => decide(request, originPolicy, entry, Boolean(isPublic), session, verified, csrfOk, originOk));
}

function decide(
  request: FastifyRequest,
  originPolicy: OriginPolicy,
  entry: MethodEntry,
  isPublic: boolean,
  session: Session | null,
  verified: Session | null,
  csrfOk: boolean,
  originOk: boolean,
): AccessResult | HttpError {
  if (isPublic || !entry.policy.requireSession) return { session: verified, isPublic };
  if (!session) return refusalOf("RPC_NO_SESSION");
  if (!csrfOk) return refusalOf("RPC_BAD_CSRF");
  if (!originOk) {
    // The log (not the answer) names both origins: answer.ts logs an HttpError's cause.
    const refused = errorOf("RPC_BAD_ORIGIN");
    Object.defineProperty(refused, "cause", { value: originMismatch(request.headers, isEncrypted(request), originPolicy) });
    return refused;
  }
  return { session, isPublic };
}

function isEncrypted(request: FastifyRequest): boolean {
  return Boolean((request.raw.socket as { encrypted?: boolean }).encrypted);
}
