/**
 * Start-up checks of `server.secure.proxies` (docs/guides/proxy.md "Configuration"): run once
 * boot hooks have registered their verifiers, so every mistake stops the start with a
 * message naming the key instead of answering 500 at the first request.
 */
import type { ResolvedConfig } from "../config/resolve.js";
import { StartupError } from "../errors/http-error.js";
import type { VerifierRegistry } from "../auth/verifier-registry.js";
import { STATIC_HEADERS_REFUSED } from "./headers.js";
import { proxyAuthEnabled, proxyVerifierSettings, type ProxyVerifier } from "../auth/verifier-types.js";
import { nodeHttp } from "../http/node-http.js";

const { validateHeaderName, validateHeaderValue } = nodeHttp;

export function checkProxyConfig(config: ResolvedConfig, proxyVerifiers: VerifierRegistry<ProxyVerifier>): void {
  for (const [alias, proxy] of config.proxies) {
    const key = `server.secure.proxies.${alias}`;
    const base = new URL(proxy.baseUrl);
    if (base.search !== "" || base.hash !== "") {
      throw new StartupError("STARTUP_CONFIG_INVALID", `${key}.baseUrl: must not carry a query or fragment (the client's query is appended)`);
    }
    if (base.username !== "" || base.password !== "") {
      throw new StartupError("STARTUP_CONFIG_INVALID", `${key}.baseUrl: must not carry credentials; send them as a static header in ${key}.headers`);
    }
    for (const [name, value] of Object.entries(proxy.headers ?? {})) {
      const lower = name.toLowerCase();
      if (STATIC_HEADERS_REFUSED.has(lower) || lower.startsWith("proxy-")) {
        throw new StartupError("STARTUP_CONFIG_INVALID", `${key}.headers.${name}: a static header may not set ${lower}, which describes the connection or the body`);
      }
      try {
        validateHeaderName(name);
        validateHeaderValue(name, value);
      } catch (error) {
        throw new StartupError("STARTUP_CONFIG_INVALID", `${key}.headers.${name}: not a valid HTTP header (${(error as Error).message})`);
      }
    }
    if (!proxyAuthEnabled(proxy)) continue;
    const names = proxyVerifierSettings(proxy).map(([name]) => name);
    if (names.length === 0) {
      throw new StartupError("STARTUP_CONFIG_INVALID", `${key}.auth.verifiers: auth.enabled is true but no verifiers are listed`);
    }
    const listed = Array.isArray(proxy.auth?.verifiers);
    names.forEach((name, index) => {
      if (!proxyVerifiers.has(name)) {
        throw new StartupError(
          "STARTUP_UNKNOWN_VERIFIER",
          `${key}.auth.verifiers.${listed ? index : name}: no proxy verifier named "${name}" is registered (known: ${proxyVerifiers.names().join(", ") || "none"})`,
        );
      }
    });
  }
}
