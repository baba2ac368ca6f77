/**
 * What a boot hook's `register(api)` receives (docs/guides/server-methods.md "Boot hooks"): every APP_SERVER
 * helper, the registrations below, and this plugin's or module's config section typed as
 * the author declares it (`register(api: BootApi<MyConfig>)`).
 */
import type { ProxyVerifier, RpcVerifier } from "../auth/verifier-types.js";
import type { Logger } from "../log/logger.js";
import type { AppServerGlobal } from "./app-server.js";
import type { RouteContext } from "./context.js";

/** Answers every verb on its prefix and below it; it owns `ctx.res`. */
export type ServerRouteHandler = (ctx: RouteContext, url: URL, prefix: string) => unknown;

export interface BootApi<Config = unknown> extends AppServerGlobal {
  /** A verifier that RPC verifier contexts name (docs/guides/server-methods.md "Exposing a method: authentication"). */
  registerRpcAuthVerifier(name: string, fn: RpcVerifier): void;
  /** A verifier that proxy aliases name (docs/guides/proxy.md "Verifiers"). */
  registerProxyAuthVerifier(name: string, fn: ProxyVerifier): void;
  /** A route below `prefix`, answered by `handler(ctx, url, prefix)` (docs/guides/server-methods.md "Boot hooks"). */
  registerServerRoute(prefix: string, handler: ServerRouteHandler): void;
  /** This plugin's or module's section of the config. */
  config: Config;
  log: Logger;
  dev: boolean;
  kind: "plugin" | "module";
  id: string;
}
