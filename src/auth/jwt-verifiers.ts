/**
 * The built-in `jwt` verifier: one function, registered for RPC contexts and for the
 * proxy, so that a plugin may replace either. Settings are `server.auth.jwt`, overridden
 * key by key by the proxy's `auth.jwt` (proxy only) and then by the verifier's own settings
 * (a context's `verifiers.jwt`, or an alias's `auth.verifiers.jwt` map entry); they are
 * resolved and checked at start for every place that uses the built-in verifier.
 */
import type { ProxyConfig, VerifierContext } from "../config/schema.js";
import type { ResolvedConfig } from "../config/resolve.js";
import { proxyAuthEnabled, proxyVerifierSettings, type ProxyVerifier, type ProxyVerifierInput, type RpcVerifier, type RpcVerifierInput, type VerifierResult } from "./verifier-types.js";
import type { VerifierRegistry } from "./verifier-registry.js";
import { bearerToken, resolveJwtSettings, verifyJwt, type ResolvedJwtSettings } from "./jwt.js";

export const JWT_VERIFIER = "jwt";

type Registries = { rpcVerifiers: VerifierRegistry<RpcVerifier>; proxyVerifiers: VerifierRegistry<ProxyVerifier> };

export class BuiltinJwtVerifiers {
  readonly #config: ResolvedConfig;
  readonly #env: NodeJS.ProcessEnv;
  // Keyed by the frozen config objects themselves: no name lookup, nothing inherited.
  readonly #settings = new WeakMap<object, ResolvedJwtSettings>();

  constructor(config: ResolvedConfig, env: NodeJS.ProcessEnv) {
    this.#config = config;
    this.#env = env;
  }

  readonly verify = async (input: RpcVerifierInput | ProxyVerifierInput): Promise<VerifierResult> => {
    const settings = isProxy(input)
      ? this.#forProxy(input.alias, input.proxyConfig, input.verifierConfig)
      : this.#forContext(input.context, input.verifierConfig, "server.secure.rpcVerifiers.<context>.verifiers.jwt");
    const claims = await verifyJwt(bearerToken(input.req.headers.authorization), settings);
    if (isProxy(input)) vouchUpstream(input, settings, claims);
    return { ok: true, user: claims };
  };

  register(registries: Registries): this {
    registries.rpcVerifiers.register(JWT_VERIFIER, this.verify);
    registries.proxyVerifiers.register(JWT_VERIFIER, this.verify);
    return this;
  }

  /**
   * After boot hooks: resolve the settings of every proxy and RPC context that uses the
   * built-in verifier, so a missing or short secret stops the start instead of failing
   * the first call. Throws a `StartupError` naming the key.
   */
  checkSettings(registries: Registries): void {
    const proxyBuiltin = registries.proxyVerifiers.get(JWT_VERIFIER) === this.verify;
    const rpcBuiltin = registries.rpcVerifiers.get(JWT_VERIFIER) === this.verify;
    if (!proxyBuiltin && !rpcBuiltin) return;
    // A global secret is checked even before anything uses it: a short one is a mistake
    // waiting for the first proxy that names `jwt`.
    const global = this.#config.jwt;
    if (global.secret !== undefined || global.secretEnv !== undefined) {
      resolveJwtSettings([{ path: "server.auth.jwt", settings: global }], this.#env);
    }
    if (proxyBuiltin) {
      for (const [alias, proxyConfig] of this.#config.proxies) {
        if (!proxyAuthEnabled(proxyConfig)) continue;
        const entry = proxyVerifierSettings(proxyConfig).find(([name]) => name === JWT_VERIFIER);
        if (entry) this.#forProxy(alias, proxyConfig, entry[1]);
      }
    }
    if (rpcBuiltin) {
      for (const [name, context] of this.#config.rpcVerifiers ?? []) {
        if (context.enabled === false || !context.verifiers || !Object.hasOwn(context.verifiers, JWT_VERIFIER)) continue;
        this.#forContext(context, context.verifiers[JWT_VERIFIER], `server.secure.rpcVerifiers.${name}.verifiers.jwt`);
      }
    }
  }

  /** The identity header the `jwt` verifier vouches for on this alias, lowercased, if any. */
  userClaimHeader(proxyConfig: ProxyConfig): string | undefined {
    return (proxyConfig.auth?.jwt?.userClaimHeader ?? this.#config.jwt.userClaimHeader)?.toLowerCase();
  }

  #forProxy(alias: string, proxyConfig: ProxyConfig, verifierConfig: unknown): ResolvedJwtSettings {
    let settings = this.#settings.get(proxyConfig);
    if (!settings) {
      settings = resolveJwtSettings(
        [
          { path: "server.auth.jwt", settings: this.#config.jwt },
          { path: `server.secure.proxies.${alias}.auth.jwt`, settings: proxyConfig.auth?.jwt },
          { path: `server.secure.proxies.${alias}.auth.verifiers.jwt`, settings: verifierConfig },
        ],
        this.#env,
      );
      this.#settings.set(proxyConfig, settings);
    }
    return settings;
  }

  #forContext(context: VerifierContext, verifierConfig: unknown, path: string): ResolvedJwtSettings {
    let settings = this.#settings.get(context);
    if (!settings) {
      settings = resolveJwtSettings(
        [
          { path: "server.auth.jwt", settings: this.#config.jwt },
          { path, settings: verifierConfig },
        ],
        this.#env,
      );
      this.#settings.set(context, settings);
    }
    return settings;
  }
}

/**
 * Before any proxy verifier runs, the headers the `jwt` verifier vouches for are taken from
 * the client's request: the identity header and `Authorization`. The verifier puts them back
 * only when the token passed, so in `any` mode a request let in by another verifier can
 * carry neither a forged identity nor an unchecked token upstream.
 */
export function withholdJwtIdentity(headers: Record<string, string>, userClaimHeader: string | undefined): void {
  for (const key of Object.keys(headers)) {
    const name = key.toLowerCase();
    if (name === "authorization" || name === userClaimHeader) delete headers[key];
  }
}

function isProxy(input: RpcVerifierInput | ProxyVerifierInput): input is ProxyVerifierInput {
  return "upstream" in input;
}

/** What a passed token changes upstream: `req.user` for later verifiers, the forwarded token, the identity header. */
function vouchUpstream(input: ProxyVerifierInput, settings: ResolvedJwtSettings, claims: Record<string, unknown>): void {
  const headers = input.upstream.headers;
  input.req.user = claims;
  if (settings.forward && typeof input.req.headers.authorization === "string") headers.authorization = input.req.headers.authorization;
  else deleteHeader(headers, "authorization");
  if (settings.userClaimHeader) {
    deleteHeader(headers, settings.userClaimHeader);
    if (typeof claims.sub === "string") headers[settings.userClaimHeader] = claims.sub;
  }
}

function deleteHeader(headers: Record<string, string>, name: string): void {
  for (const key of Object.keys(headers)) if (key.toLowerCase() === name) delete headers[key];
}
