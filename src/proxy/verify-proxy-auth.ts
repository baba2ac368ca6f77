/**
 * `verifyProxyAuth` (docs/guides/proxy.md "`verifyProxyAuth`"): runs an alias's verifiers through
 * the one verifier runner (auth/run-verifiers.ts), in `all` or `any` mode.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import type { ResolvedConfig } from "../config/resolve.js";
import type { ProxyConfig } from "../config/schema.js";
import type { CoreFacade } from "../core/facade.js";
import { JWT_VERIFIER, withholdJwtIdentity } from "../auth/jwt-verifiers.js";
import { runVerifiers } from "../auth/run-verifiers.js";
import { proxyAuthEnabled, proxyVerifierSettings, type ProxyVerifier, type UpstreamState } from "../auth/verifier-types.js";
import type { VerifierRegistry } from "../auth/verifier-registry.js";
import type { Logger } from "../log/logger.js";

/** What running an alias's verifiers needs from the server (an `AppServer`'s `core` has it). */
export interface ProxyAuthDeps {
  proxyVerifiers: VerifierRegistry<ProxyVerifier>;
  log: Logger;
  config: Pick<ResolvedConfig, "jwt">;
  /** What a verifier gets as `core`. */
  facade: CoreFacade;
}

/**
 * True when the request may go upstream: auth is off for this proxy, or its verifiers
 * passed (their changes to `upstreamState.headers` are kept). False when it must be
 * answered 401 `PROXY_AUTH_FAILED`; the caller answers. `reqId` names the request in the
 * log lines of a refusal.
 */
export async function verifyProxyAuth(
  req: IncomingMessage & { user?: unknown },
  res: ServerResponse,
  deps: ProxyAuthDeps,
  alias: string,
  proxyConfig: ProxyConfig,
  upstreamState: UpstreamState,
  reqId?: string,
): Promise<boolean> {
  if (!proxyAuthEnabled(proxyConfig)) return true;
  const verifiers = proxyVerifierSettings(proxyConfig);
  // Start-up refuses this; a caller building its own config gets a refusal, not a pass.
  if (verifiers.length === 0) return false;
  const jwt = verifiers.find(([name]) => name === JWT_VERIFIER);
  if (jwt) {
    const header = (jwt[1].userClaimHeader ?? proxyConfig.auth?.jwt?.userClaimHeader ?? deps.config.jwt.userClaimHeader) as string | undefined;
    withholdJwtIdentity(upstreamState.headers, header?.toLowerCase());
  }
  const settings = new Map(verifiers);
  const verdict = await runVerifiers({
    names: verifiers.map(([name]) => name),
    mode: proxyConfig.auth?.mode === "any" ? "any" : "all",
    registry: deps.proxyVerifiers,
    inputFor: (name) => ({
      req,
      res,
      core: deps.facade,
      alias,
      proxyConfig,
      upstream: upstreamState,
      verifierName: name,
      verifierConfig: settings.get(name) ?? {},
    }),
    log: deps.log,
    path: "proxy",
    logFields: { reqId, alias },
  });
  return verdict.passed;
}
