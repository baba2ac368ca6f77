/**
 * HS256 bearer tokens (docs/guides/proxy.md "The `jwt` verifier"):
 * settings resolved once at start (global `server.auth.jwt` overridden key by key by a
 * proxy's `auth.jwt` or an RPC context's `verifiers.jwt`), and the check of one token.
 * Imports only jose, the config schema and the error module.
 */
import type { JWTPayload } from "jose";
import { jwtSettingsSchema, type JwtSettings } from "../config/schema.js";
import { describeIssues } from "../config/config-issues.js";
import { StartupError } from "../errors/http-error.js";
import { JwtMissingError, fromJoseError } from "./jwt-errors.js";
import { MIN_SECRET_BYTES } from "./session.js";

export interface ResolvedJwtSettings {
  key: Uint8Array;
  issuer: string | undefined;
  audience: string | undefined;
  clockSkewSec: number;
  /** Only a real `true` forwards `Authorization` upstream (the schema refuses non-booleans). */
  forward: boolean;
  /** Lowercased. */
  userClaimHeader: string | undefined;
}

/** One place settings come from, most general first; `path` names it in start-up errors. */
export interface JwtSettingsSource {
  path: string;
  settings: unknown;
}

/**
 * Merges the sources key by key (later wins) and resolves the secret. The secret comes
 * from the most specific source that sets `secret` or `secretEnv`, so a context's
 * `secretEnv` wins over a global `secret` (docs/guides/proxy.md "Settings").
 */
export function resolveJwtSettings(sources: JwtSettingsSource[], env: NodeJS.ProcessEnv): ResolvedJwtSettings {
  const parsed = sources.map((source) => ({ path: source.path, settings: parseSettings(source) }));
  const merged: JwtSettings = {};
  for (const { settings } of parsed) {
    for (const [key, value] of Object.entries(settings)) {
      if (value !== undefined) (merged as Record<string, unknown>)[key] = value;
    }
  }
  return {
    key: new TextEncoder().encode(resolveSecret(parsed, env)),
    issuer: merged.issuer,
    audience: merged.audience,
    clockSkewSec: merged.clockSkewSec ?? 0,
    forward: merged.forward === true,
    userClaimHeader: merged.userClaimHeader?.toLowerCase(),
  };
}

function parseSettings(source: JwtSettingsSource): JwtSettings {
  if (source.settings === undefined) return {};
  // Proxy and global settings went through the config schema already; an RPC context's
  // verifier settings are an open record, so they are checked here with the same schema.
  const result = jwtSettingsSchema.safeParse(source.settings);
  if (!result.success) {
    throw new StartupError("STARTUP_CONFIG_INVALID", describeIssues(jwtSettingsSchema, result.error.issues, source.path).join(" · "));
  }
  return result.data;
}

function resolveSecret(sources: Array<{ path: string; settings: JwtSettings }>, env: NodeJS.ProcessEnv): string {
  for (let index = sources.length - 1; index >= 0; index -= 1) {
    const { path, settings } = sources[index]!;
    if (settings.secret !== undefined && settings.secretEnv !== undefined) {
      throw new StartupError("STARTUP_CONFIG_INVALID", `${path}: set either secret or secretEnv, not both`);
    }
    if (settings.secretEnv !== undefined) {
      const value = env[settings.secretEnv];
      if (value === undefined || value === "") {
        throw new StartupError("STARTUP_ENV_MISSING", `${path}.secretEnv names environment variable ${settings.secretEnv}, which is not set`);
      }
      return checkLength(value, `${path}.secretEnv (${settings.secretEnv})`);
    }
    if (settings.secret !== undefined) return checkLength(settings.secret, `${path}.secret`);
  }
  const where = sources.map((source) => source.path).join(" or ");
  throw new StartupError("STARTUP_CONFIG_INVALID", `${sources[sources.length - 1]?.path ?? "server.auth.jwt"}: no JWT secret; set secret or secretEnv in ${where}`);
}

function checkLength(secret: string, key: string): string {
  // A short HS256 secret can be brute-forced offline from any one token.
  if (Buffer.byteLength(secret, "utf8") < MIN_SECRET_BYTES) {
    throw new StartupError("STARTUP_WEAK_SECRET", `${key}: the JWT secret must be at least ${MIN_SECRET_BYTES} bytes long`);
  }
  return secret;
}

let jose: typeof import("jose") | undefined;

/** The token of an `Authorization: Bearer <token>` header; throws `JwtMissingError` otherwise. */
export function bearerToken(header: string | string[] | undefined): string {
  if (typeof header !== "string") throw new JwtMissingError();
  const match = /^Bearer +(\S+) *$/i.exec(header);
  if (!match) throw new JwtMissingError();
  return match[1]!;
}

/**
 * The claims of a valid token, or a `JwtError`. HS256 only (`none` in any case, other
 * HMAC sizes and every asymmetric algorithm are refused, which also closes the
 * RS256-public-key-as-HMAC-secret confusion), `typ` JWT, `exp` required, `nbf` honoured,
 * both with `clockSkewSec`; `iss` and `aud` must be present and match when configured.
 */
export async function verifyJwt(token: string, settings: ResolvedJwtSettings): Promise<JWTPayload> {
  try {
    // Loaded on first use: a server without JWT checks does not carry jose in memory.
    jose ??= await import("jose");
    const { payload } = await jose.jwtVerify(token, settings.key, {
      algorithms: ["HS256"],
      typ: "JWT",
      clockTolerance: settings.clockSkewSec,
      issuer: settings.issuer,
      audience: settings.audience,
      // A token without `exp` would be a credential that never ends.
      requiredClaims: ["exp"],
    });
    return payload;
  } catch (error) {
    throw fromJoseError(error);
  }
}
