/**
 * Session, CSRF and origin: the built-in checks of the decision matrix (SPEC
 * "Authentication / RPC"), which run before the body is read. Verifiers come later,
 * because the context they need is named in the body.
 */
import type { FastifyRequest } from "fastify";
import { errorOf } from "../errors/http-error.js";
import { originAllowed, type OriginPolicy } from "../auth/origin.js";
import { SESSION_COOKIE, type Session, type SessionSigner } from "../auth/session.js";
import type { MethodEntry } from "../discovery/registry.js";

export interface AccessResult {
  /** The viewer's session when the cookie is valid (also for public calls), else null. */
  session: Session | null;
  /** True when `auth.public` waived every check, verifiers included. */
  isPublic: boolean;
}

export async function checkAccess(
  request: FastifyRequest,
  entry: MethodEntry,
  sessions: SessionSigner,
  originPolicy: OriginPolicy,
): Promise<AccessResult> {
  const session = sessions.verify(request.cookies[SESSION_COOKIE]);
  const rule = entry.policy.public;
  const isPublic =
    typeof rule === "function"
      ? Boolean(
          await rule({
            req: request.raw,
            headers: request.headers,
            session: session ? { id: session.id } : null,
            kind: entry.kind,
            id: entry.id,
            method: entry.name,
          }),
        )
      : rule === true;
  if (isPublic || !entry.policy.requireSession) return { session, isPublic };

  if (!session) throw errorOf("RPC_NO_SESSION");
  if (!sessions.checkCsrf(session, request.headers["x-app-csrf"])) throw errorOf("RPC_BAD_CSRF");
  if (!originAllowed(request.headers, isEncrypted(request), originPolicy)) throw errorOf("RPC_BAD_ORIGIN");
  return { session, isPublic };
}

function isEncrypted(request: FastifyRequest): boolean {
  return Boolean((request.raw.socket as { encrypted?: boolean }).encrypted);
}
