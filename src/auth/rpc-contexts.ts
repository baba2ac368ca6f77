/**
 * RPC verifier contexts (docs/guides/server-methods.md "Exposing a method: authentication"): which
 * `rpcVerifiers` entry applies to a call, and running its verifiers in `all` or `any`
 * mode. Session and CSRF are not verifiers; they run earlier in the request path.
 */
import type { VerifierContext } from "../config/schema.js";
import type { CoreFacade } from "../core/facade.js";
import { StartupError, errorOf } from "../errors/http-error.js";
import type { Logger } from "../log/logger.js";
import { runVerifiers } from "./run-verifiers.js";
import type { RpcVerifier, RpcVerifierInput } from "./verifier-types.js";
import type { VerifierRegistry } from "./verifier-registry.js";

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

export interface VerifyInput extends Omit<RpcVerifierInput, "verifierName" | "verifierConfig" | "context" | "core"> {
  reqId: string;
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
  core: CoreFacade,
  log: Logger,
): Promise<unknown> {
  const { context } = input.resolved;
  if (!contextHasVerifiers(context)) {
    if (input.requireSession || context?.enabled === false) return null;
    throw errorOf(context === undefined ? "RPC_AUTH_NOT_CONFIGURED" : "RPC_AUTH_NO_VERIFIERS");
  }
  const settings = context!.verifiers!;
  const verdict = await runVerifiers({
    names: verifierNames(context),
    mode: context!.mode ?? "all",
    registry,
    inputFor: (name) => ({
      req: input.req,
      res: input.res,
      core,
      contextId: input.contextId,
      context: context!,
      verifierName: name,
      verifierConfig: (settings[name] ?? {}) as Record<string, unknown>,
      kind: input.kind,
      id: input.id,
      method: input.method,
    }),
    log,
    path: "rpc",
    logFields: { reqId: input.reqId, contextId: input.resolved.name },
  });
  if (!verdict.passed) throw errorOf("RPC_AUTH_FAILED");
  return verdict.user;
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
          "STARTUP_UNKNOWN_VERIFIER",
          `server.secure.rpcVerifiers.${contextName}.verifiers.${name}: no verifier named "${name}" is registered (known: ${registry.names().join(", ") || "none"})`,
        );
      }
    }
  }
}
