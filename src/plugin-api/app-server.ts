/**
 * `globalThis.APP_SERVER` (docs/guides/server-methods.md "Server methods"): what server files reach without
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
 *   `server.outbound` settings differ from a running one's is refused at start;
 * - `importServerModule(ctx, …)` finds the items of the call's server through `ctx.core`,
 *   the facade that server made for the calling item.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import { RpcError, StartupError } from "../errors/http-error.js";
import { SsrfBlockedError, SsrfRedirectError } from "../outbound/errors.js";
import { configureDefaultGuard, safeFetch, validateUpstreamUrl, type OutboundGuardOptions } from "../outbound/guard.js";
import { safeRequest } from "../outbound/safe-request.js";
import type { ProxyVerifier, RpcVerifier } from "../auth/verifier-types.js";
import * as secureHelpers from "./secure-helpers.js";
import { file } from "./file-result.js";
import { importServerExport, importServerModule, resolveServerTarget, type ServerTargetScope } from "./server-targets.js";

export interface AppServerGlobal {
  validateUpstreamUrl: typeof validateUpstreamUrl;
  safeFetch: typeof safeFetch;
  /** `safeFetch` with Node-style answers, buffered and capped (docs/guides/outbound-guard.md). */
  safeRequest: typeof safeRequest;
  SsrfBlockedError: typeof SsrfBlockedError;
  SsrfRedirectError: typeof SsrfRedirectError;
  RpcError: typeof RpcError;
  /** A file answer instead of JSON (docs/guides/files.md). */
  file: typeof file;
  /** With a method's `ctx`, whether that call's server runs in dev mode. */
  isDevMode(ctx?: unknown): boolean;
  registerRpcAuthVerifier(name: string, fn: RpcVerifier): void;
  registerProxyAuthVerifier(name: string, fn: ProxyVerifier): void;
  getSecurePluginConfig: typeof secureHelpers.getSecurePluginConfig;
  getSecureModuleConfig: typeof secureHelpers.getSecureModuleConfig;
  getSecureItemConfig: typeof secureHelpers.getSecureItemConfig;
  getSecureValue: typeof secureHelpers.getSecureValue;
  requireSecureValue: typeof secureHelpers.requireSecureValue;
  getRpcAuthConfig: typeof secureHelpers.getRpcAuthConfig;
  /** The absolute path of the server file a target names (`"module:<id>/<path>"`, `"./<path>"`, …). */
  resolveServerFile(ctx: unknown, target: unknown): Promise<{ file: string }>;
  importServerModule(ctx: unknown, target: unknown): Promise<Record<string, unknown>>;
  importServerExport(ctx: unknown, target: unknown, exportName?: string): Promise<unknown>;
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
  /** The items of the server a `ctx` belongs to, for importServerModule. */
  targetScope(ctx: unknown): ServerTargetScope | undefined;
}

/** The one factory: configures the process's outbound guard and returns the frozen API. */
export function createAppServerApi(options: AppServerApiOptions): AppServerGlobal {
  configureDefaultGuard(options.outbound);
  const scopeOf = (ctx: unknown): ServerTargetScope => {
    const scope = options.targetScope(ctx);
    if (!scope) throw new Error("importServerModule and importServerExport need the ctx of a method, a route or a verifier as their first argument");
    return scope;
  };
  return Object.freeze({
    ...secureHelpers,
    resolveServerFile: async (ctx: unknown, target: unknown) => ({ file: await resolveServerTarget(scopeOf(ctx), ctx, target) }),
    importServerModule: (ctx: unknown, target: unknown) => importServerModule(scopeOf(ctx), ctx, target),
    importServerExport: (ctx: unknown, target: unknown, exportName?: string) => importServerExport(scopeOf(ctx), ctx, target, exportName),
    validateUpstreamUrl,
    safeFetch,
    safeRequest,
    SsrfBlockedError,
    SsrfRedirectError,
    RpcError,
    file,
    isDevMode: options.isDevMode,
    registerRpcAuthVerifier: options.registerRpcAuthVerifier,
    registerProxyAuthVerifier: options.registerProxyAuthVerifier,
  });
}

/** Which server a facade (`ctx.core`) was made by, for importServerModule in the main thread. */
const scopes = new WeakMap<object, ServerTargetScope>();

export function bindFacadeScope(facade: object, scope: ServerTargetScope): void {
  scopes.set(facade, scope);
}

function facadeScope(ctx: unknown): ServerTargetScope | undefined {
  const core = (ctx as { core?: unknown } | null | undefined)?.core;
  return core !== null && typeof core === "object" ? scopes.get(core) : undefined;
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
      "STARTUP_CONFIG_INVALID",
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
      targetScope: facadeScope,
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
