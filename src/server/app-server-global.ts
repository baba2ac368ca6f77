/**
 * `globalThis.APP_SERVER` (README "Server methods"): what server files reach without
 * importing the package. Installed before any boot hook or server file loads, in the main
 * thread and in every isolation worker. The registration functions point at the server
 * being started, so a boot hook registers into the right server.
 */
import { RpcError } from "../errors/http-error.js";
import { SsrfBlockedError, SsrfRedirectError } from "../outbound/errors.js";
import { configureDefaultGuard, safeFetch, validateUpstreamUrl, type OutboundGuardOptions } from "../outbound/guard.js";
import type { RpcVerifier } from "../auth/rpc-verifiers.js";
import type { ProxyVerifier } from "../proxy/verifiers.js";

export interface AppServerGlobal {
  validateUpstreamUrl: typeof validateUpstreamUrl;
  safeFetch: typeof safeFetch;
  SsrfBlockedError: typeof SsrfBlockedError;
  SsrfRedirectError: typeof SsrfRedirectError;
  RpcError: typeof RpcError;
  isDevMode(): boolean;
  registerRpcAuthVerifier(name: string, fn: RpcVerifier): void;
  registerProxyAuthVerifier(name: string, fn: ProxyVerifier): void;
}

declare global {
  // eslint-disable-next-line no-var
  var APP_SERVER: AppServerGlobal;
}

export interface AppServerGlobalOptions {
  dev: boolean;
  outbound: OutboundGuardOptions;
  registerRpcAuthVerifier(name: string, fn: RpcVerifier): void;
  registerProxyAuthVerifier(name: string, fn: ProxyVerifier): void;
}

export function installAppServerGlobal(options: AppServerGlobalOptions): AppServerGlobal {
  configureDefaultGuard(options.outbound);
  const api: AppServerGlobal = Object.freeze({
    validateUpstreamUrl,
    safeFetch,
    SsrfBlockedError,
    SsrfRedirectError,
    RpcError,
    isDevMode: () => options.dev,
    registerRpcAuthVerifier: options.registerRpcAuthVerifier,
    registerProxyAuthVerifier: options.registerProxyAuthVerifier,
  });
  globalThis.APP_SERVER = api;
  return api;
}
