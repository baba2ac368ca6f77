/**
 * `globalThis.APP_SERVER` (README "Server methods"): what server files reach without
 * importing the package. One factory makes it, in the main thread and in every isolation
 * worker, and it is installed before any boot hook or server file loads.
 *
 * Several servers in one process (tests, embedding) share the one global:
 * - verifiers registered through it go to the server whose boot is running them: the boot
 *   runs in an AsyncLocalStorage context, so code of another server (a method, a reload)
 *   that registers meanwhile is refused rather than reaching the wrong server, and boots
 *   of several servers may overlap; outside a boot, registering throws;
 * - `isDevMode(ctx)` answers for the server of that call; without `ctx`, for the server
 *   whose boot runs it, else the one that joined last;
 * - the outbound guard behind `safeFetch` is process-wide, so a second server whose
 *   `server.outbound` settings differ from a running one's is refused at start.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import { RpcError, StartupError } from "../errors/http-error.js";
import { SsrfBlockedError, SsrfRedirectError } from "../outbound/errors.js";
import { configureDefaultGuard, safeFetch, validateUpstreamUrl, type OutboundGuardOptions } from "../outbound/guard.js";
import type { ProxyVerifier, RpcVerifier } from "../auth/verifier-types.js";

export interface AppServerGlobal {
  validateUpstreamUrl: typeof validateUpstreamUrl;
  safeFetch: typeof safeFetch;
  SsrfBlockedError: typeof SsrfBlockedError;
  SsrfRedirectError: typeof SsrfRedirectError;
  RpcError: typeof RpcError;
  /** With a method's `ctx`, whether that call's server runs in dev mode. */
  isDevMode(ctx?: unknown): boolean;
  registerRpcAuthVerifier(name: string, fn: RpcVerifier): void;
  registerProxyAuthVerifier(name: string, fn: ProxyVerifier): void;
}

declare global {
  // eslint-disable-next-line no-var
  var APP_SERVER: AppServerGlobal;
}

export interface AppServerApiOptions {
  outbound: OutboundGuardOptions;
  isDevMode(ctx?: unknown): boolean;
  registerRpcAuthVerifier(name: string, fn: RpcVerifier): void;
  registerProxyAuthVerifier(name: string, fn: ProxyVerifier): void;
}

/** The one factory: configures the process's outbound guard and returns the frozen API. */
export function createAppServerApi(options: AppServerApiOptions): AppServerGlobal {
  configureDefaultGuard(options.outbound);
  return Object.freeze({
    validateUpstreamUrl,
    safeFetch,
    SsrfBlockedError,
    SsrfRedirectError,
    RpcError,
    isDevMode: options.isDevMode,
    registerRpcAuthVerifier: options.registerRpcAuthVerifier,
    registerProxyAuthVerifier: options.registerProxyAuthVerifier,
  });
}

/** What a dev flag looks like on a method's `ctx` (`ctx.core.server.devMode`). */
export function devModeOf(ctx: unknown): boolean | undefined {
  const value = (ctx as { core?: { server?: { devMode?: unknown } } } | null | undefined)?.core?.server?.devMode;
  return typeof value === "boolean" ? value : undefined;
}

/** One server's share of the main thread's APP_SERVER. */
export interface AppServerMember {
  dev: boolean;
  outbound: OutboundGuardOptions;
  registerRpcAuthVerifier(name: string, fn: RpcVerifier): void;
  registerProxyAuthVerifier(name: string, fn: ProxyVerifier): void;
}

const members: AppServerMember[] = [];
/**
 * The server whose boot runs the current code. Disabled between boots: while enabled,
 * Node 20 tracks every promise for it, which no request should pay for.
 */
const booting = new AsyncLocalStorage<AppServerMember>();
let bootsRunning = 0;

function currentMember(): AppServerMember | undefined {
  return booting.getStore() ?? members.at(-1);
}

function duringBoot(what: string): AppServerMember {
  const member = booting.getStore();
  if (!member) throw new Error(`APP_SERVER.${what} registers verifiers only while boot hooks run: call it from register(api) in a register.server.* file`);
  return member;
}

function outboundKey(outbound: OutboundGuardOptions): string {
  return JSON.stringify({ allow: [...(outbound.allow ?? [])].sort(), timeoutMs: outbound.timeoutMs });
}

/**
 * Adds a server to the main thread's APP_SERVER (installing it for the first one).
 * `boot(fn)` runs `fn` (its discovery) as the booting server, one server at a time;
 * `leave()` takes the server out when it closes.
 */
export function joinAppServerGlobal(member: AppServerMember): { boot<T>(fn: () => Promise<T>): Promise<T>; leave(): void } {
  const running = members[0];
  if (running && outboundKey(running.outbound) !== outboundKey(member.outbound)) {
    throw new StartupError(
      "another server in this process uses different server.outbound settings; APP_SERVER.safeFetch is process-wide, so servers sharing a process must share them",
    );
  }
  // The first server installs the global and configures the process's outbound guard;
  // later ones share both (reconfiguring would close the pooled connections of the servers
  // already running).
  if (members.length === 0) {
    globalThis.APP_SERVER = createAppServerApi({
      outbound: member.outbound,
      isDevMode: (ctx) => devModeOf(ctx) ?? currentMember()?.dev ?? false,
      registerRpcAuthVerifier: (name, fn) => duringBoot("registerRpcAuthVerifier").registerRpcAuthVerifier(name, fn),
      registerProxyAuthVerifier: (name, fn) => duringBoot("registerProxyAuthVerifier").registerProxyAuthVerifier(name, fn),
    });
  }
  members.push(member);
  return {
    async boot<T>(fn: () => Promise<T>): Promise<T> {
      bootsRunning += 1;
      try {
        return await booting.run(member, fn);
      } finally {
        bootsRunning -= 1;
        if (bootsRunning === 0) booting.disable();
      }
    },
    leave() {
      const index = members.indexOf(member);
      if (index !== -1) members.splice(index, 1);
    },
  };
}
