/**
 * RPC verifier contexts (README "Exposing a method: authentication"): which
 * `rpcVerifiers` entry applies to a call, and running its verifiers in `all` or `any`
 * mode. Session and CSRF are not verifiers; they run earlier in the request path.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import type { VerifierContext } from "../config/schema.js";
import { StartupError, errorOf } from "../errors/http-error.js";
import type { Logger } from "../log/logger.js";
import type { VerifierRegistry } from "./verifier-registry.js";

export interface RpcVerifierInput {
  req: IncomingMessage;
  res: ServerResponse;
  core: unknown;
  contextId: string | undefined;
  context: VerifierContext;
  verifierName: string;
  verifierConfig: Record<string, unknown>;
  kind: string;
  id: string;
  method: string;
}

export type RpcVerifierResult = boolean | { ok: boolean; user?: unknown } | null | undefined;
export type RpcVerifier = (input: RpcVerifierInput) => RpcVerifierResult | Promise<RpcVerifierResult>;

export interface ResolvedContext {
  /** The entry name that applied (`default` when falling back), or null when none did. */
  name: string | null;
  context: VerifierContext | undefined;
}

/**
 * Own-property resolution only: `Map#get` cannot see inherited names, so `__proto__`,
 * `constructor` or `toString` as a contextId fall through to `default`.
 */
export function resolveVerifierContext(
  contexts: ReadonlyMap<string, VerifierContext> | null,
  contextId: string | undefined,
): ResolvedContext {
  if (contexts && typeof contextId === "string" && contexts.has(contextId)) {
    return { name: contextId, context: contexts.get(contextId) };
  }
  if (contexts?.has("default")) return { name: "default", context: contexts.get("default") };
  return { name: null, context: undefined };
}

function verifierNames(context: VerifierContext | undefined): string[] {
  return Object.keys(context?.verifiers ?? {});
}

/** True when the context asks for verifier checks (it exists, is not opted out, and names some). */
export function contextHasVerifiers(context: VerifierContext | undefined): boolean {
  return context !== undefined && context.enabled !== false && verifierNames(context).length > 0;
}

export interface VerifyInput extends Omit<RpcVerifierInput, "verifierName" | "verifierConfig" | "context"> {
  resolved: ResolvedContext;
  requireSession: boolean;
}

/**
 * The verifier row of the decision matrix. Returns the user claims a verifier supplied
 * (or null); throws the RPC error that answers the call otherwise.
 */
export async function runRpcVerifiers(
  input: VerifyInput,
  registry: VerifierRegistry<RpcVerifier>,
  log: Logger,
): Promise<unknown> {
  const { context } = input.resolved;
  if (!contextHasVerifiers(context)) {
    if (input.requireSession || context?.enabled === false) return null;
    throw errorOf(context === undefined ? "RPC_AUTH_NOT_CONFIGURED" : "RPC_AUTH_NO_VERIFIERS");
  }
  const mode = context!.mode ?? "all";
  let user: unknown = null;
  let passed = 0;
  for (const name of verifierNames(context)) {
    const outcome = await runOne(name, input, context!, registry, log);
    if (outcome.ok) {
      passed += 1;
      user ??= outcome.user ?? null;
      if (mode === "any") return user;
    } else if (mode === "all") {
      throw errorOf("RPC_AUTH_FAILED");
    }
  }
  if (passed === 0) throw errorOf("RPC_AUTH_FAILED");
  return user;
}

async function runOne(
  name: string,
  input: VerifyInput,
  context: VerifierContext,
  registry: VerifierRegistry<RpcVerifier>,
  log: Logger,
): Promise<{ ok: boolean; user?: unknown }> {
  const verifier = registry.get(name);
  if (!verifier) {
    log.error({ verifier: name }, "rpc verifier is not registered");
    return { ok: false };
  }
  try {
    const result = await verifier({
      req: input.req,
      res: input.res,
      core: input.core,
      contextId: input.contextId,
      context,
      verifierName: name,
      verifierConfig: (context.verifiers?.[name] ?? {}) as Record<string, unknown>,
      kind: input.kind,
      id: input.id,
      method: input.method,
    });
    if (result === true) return { ok: true };
    if (result && typeof result === "object" && result.ok === true) return { ok: true, user: result.user };
    log.info({ verifier: name, contextId: input.resolved.name }, "rpc verifier refused the call");
    return { ok: false };
  } catch (error) {
    // The reason goes to the log only: a client learns nothing about why a token failed.
    log.info({ verifier: name, contextId: input.resolved.name, reason: (error as Error)?.message }, "rpc verifier refused the call");
    return { ok: false };
  }
}

/** Every verifier a context names must exist once boot hooks have run. */
export function checkRpcVerifierNames(
  contexts: ReadonlyMap<string, VerifierContext> | null,
  registry: VerifierRegistry<RpcVerifier>,
): void {
  for (const [contextName, context] of contexts ?? []) {
    for (const name of verifierNames(context)) {
      if (!registry.has(name)) {
        throw new StartupError(
          `server.secure.rpcVerifiers.${contextName}.verifiers.${name}: no verifier named "${name}" is registered (known: ${registry.names().join(", ") || "none"})`,
        );
      }
    }
  }
}
