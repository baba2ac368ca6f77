/**
 * `globalThis.APP_SERVER` for code under test that runs without a server: a method
 * called with a made-up `ctx` throws `new APP_SERVER.RpcError(…)` or calls
 * `APP_SERVER.safeFetch`, and a server file may read the global as it loads. The same
 * factory as a server's (plugin-api/app-server.ts), with the config's default outbound
 * settings; a server started later in the process installs its own over it.
 */
import { parseConfig } from "../config/load.js";
import { createAppServerApi, devModeOf } from "../plugin-api/app-server.js";

export function ensureAppServerGlobal(): void {
  if (globalThis.APP_SERVER !== undefined) return;
  const { outbound } = parseConfig({}, {});
  const outsideBoot = () => {
    throw new Error("verifiers are registered by boot hooks, which only a server runs: use startTestApp to test them");
  };
  globalThis.APP_SERVER = createAppServerApi({
    outbound: { allow: outbound.allow, timeoutMs: outbound.timeoutMs },
    isDevMode: (ctx) => devModeOf(ctx) ?? false,
    registerRpcAuthVerifier: outsideBoot,
    registerProxyAuthVerifier: outsideBoot,
    // importServerModule needs the items of a running server, which a made-up ctx has not.
    targetScope: () => undefined,
  });
}
