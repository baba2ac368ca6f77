/**
 * The built-in `jwt` verifier, once for the proxy and once for RPC contexts. Registered
 * before boot hooks run, so a plugin may replace either; settings are resolved and
 * checked at start for every place that still uses the built-in one.
 */
import type { ProxyConfig, VerifierContext } from "../config/schema.js";
import type { ResolvedConfig } from "../config/resolve.js";
import { proxyAuthEnabled, type ProxyVerifier } from "../proxy/verifiers.js";
import type { RpcVerifier } from "./rpc-verifiers.js";
import type { VerifierRegistry } from "./verifier-registry.js";
import { bearerToken, resolveJwtSettings, verifyJwt, type ResolvedJwtSettings } from "./jwt.js";

export const JWT_VERIFIER = "jwt";

export class BuiltinJwtVerifiers {
  readonly #config: ResolvedConfig;
  readonly #env: NodeJS.ProcessEnv;
  // Keyed by the frozen config objects themselves: no name lookup, nothing inherited.
  readonly #proxySettings = new WeakMap<ProxyConfig, ResolvedJwtSettings>();
  readonly #rpcSettings = new WeakMap<VerifierContext, ResolvedJwtSettings>();

  constructor(config: ResolvedConfig, env: NodeJS.ProcessEnv) {
    this.#config = config;
    this.#env = env;
  }

  readonly proxy: ProxyVerifier = async ({ req, alias, proxyConfig, upstream }) => {
    const settings = this.#forProxy(alias, proxyConfig);
    const headers = upstream.headers;
    // Whatever the outcome, the client never chooses the identity header itself.
    if (settings.userClaimHeader) deleteHeader(headers, settings.userClaimHeader);
    const claims = await verifyJwt(bearerToken(req.headers.authorization), settings);
    req.user = claims;
    // verifyProxyAuth removed Authorization before the verifiers ran: forwarding puts the
    // checked token back.
    if (settings.forward && typeof req.headers.authorization === "string") headers.authorization = req.headers.authorization;
    else deleteHeader(headers, "authorization");
    if (settings.userClaimHeader && typeof claims.sub === "string") headers[settings.userClaimHeader] = claims.sub;
    return true;
  };

  readonly rpc: RpcVerifier = async ({ req, context, verifierConfig }) => {
    const settings = this.#forContext(context, verifierConfig, "server.secure.rpcVerifiers.<context>.verifiers.jwt");
    const claims = await verifyJwt(bearerToken(req.headers.authorization), settings);
    return { ok: true, user: claims };
  };

  register(registries: { rpcVerifiers: VerifierRegistry<RpcVerifier>; proxyVerifiers: VerifierRegistry<ProxyVerifier> }): this {
    registries.rpcVerifiers.register(JWT_VERIFIER, this.rpc);
    registries.proxyVerifiers.register(JWT_VERIFIER, this.proxy);
    return this;
  }

  /**
   * After boot hooks: resolve the settings of every proxy and RPC context that uses the
   * built-in verifier, so a missing or short secret stops the start instead of failing
   * the first call. Throws a `StartupError` naming the key.
   */
  checkSettings(registries: { rpcVerifiers: VerifierRegistry<RpcVerifier>; proxyVerifiers: VerifierRegistry<ProxyVerifier> }): void {
    const proxyBuiltin = registries.proxyVerifiers.get(JWT_VERIFIER) === this.proxy;
    const rpcBuiltin = registries.rpcVerifiers.get(JWT_VERIFIER) === this.rpc;
    if (!proxyBuiltin && !rpcBuiltin) return;
    // A global secret is checked even before anything uses it: a short one is a mistake
    // waiting for the first proxy that names `jwt`.
    const global = this.#config.jwt;
    if (global.secret !== undefined || global.secretEnv !== undefined) {
      resolveJwtSettings([{ path: "server.auth.jwt", settings: global }], this.#env);
    }
    if (proxyBuiltin) {
      for (const [alias, proxyConfig] of this.#config.proxies) {
        if (proxyAuthEnabled(proxyConfig) && proxyConfig.auth?.verifiers?.includes(JWT_VERIFIER)) this.#forProxy(alias, proxyConfig);
      }
    }
    if (rpcBuiltin) {
      for (const [name, context] of this.#config.rpcVerifiers ?? []) {
        if (context.enabled === false || !context.verifiers || !Object.hasOwn(context.verifiers, JWT_VERIFIER)) continue;
        this.#forContext(context, context.verifiers[JWT_VERIFIER], `server.secure.rpcVerifiers.${name}.verifiers.jwt`);
      }
    }
  }

  #forProxy(alias: string, proxyConfig: ProxyConfig): ResolvedJwtSettings {
    let settings = this.#proxySettings.get(proxyConfig);
    if (!settings) {
      settings = resolveJwtSettings(
        [
          { path: "server.auth.jwt", settings: this.#config.jwt },
          { path: `server.secure.proxies.${alias}.auth.jwt`, settings: proxyConfig.auth?.jwt },
        ],
        this.#env,
      );
      this.#proxySettings.set(proxyConfig, settings);
    }
    return settings;
  }

  #forContext(context: VerifierContext, verifierConfig: unknown, path: string): ResolvedJwtSettings {
    let settings = this.#rpcSettings.get(context);
    if (!settings) {
      settings = resolveJwtSettings(
        [
          { path: "server.auth.jwt", settings: this.#config.jwt },
          { path, settings: verifierConfig },
        ],
        this.#env,
      );
      this.#rpcSettings.set(context, settings);
    }
    return settings;
  }
}

function deleteHeader(headers: Record<string, string>, name: string): void {
  for (const key of Object.keys(headers)) if (key.toLowerCase() === name) delete headers[key];
}
