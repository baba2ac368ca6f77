/**
 * `createServer()`: builds one server from an app root and a config. Everything that can
 * be decided once (config, secrets, discovery, verifier names) is decided here, before
 * `listen()`, so a misconfigured server fails at start instead of at the first request.
 */
import { access, constants, readFile, stat } from "node:fs/promises";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import type { FastifyInstance } from "fastify";
import type { DestinationStream } from "pino";
import { SessionSigner, sessionSecretFrom } from "../auth/session.js";
import { SessionCheck } from "../auth/session-cache.js";
import { VerifierRegistry } from "../auth/verifier-registry.js";
import { checkRpcVerifierNames } from "../auth/rpc-contexts.js";
import { BuiltinJwtVerifiers } from "../auth/jwt-verifiers.js";
import { loadConfigFile, parseConfig } from "../config/load.js";
import type { AppConfigInput } from "../config/schema.js";
import type { ResolvedConfig } from "../config/resolve.js";
import { DevReload } from "../discovery/dev-reload.js";
import { discover } from "../discovery/discover.js";
import { ModuleGraph } from "../discovery/module-graph.js";
import { importServerFile } from "../discovery/import-server-file.js";
import type { Registry, Target } from "../discovery/registry.js";
import { ServerRoutes } from "../discovery/server-routes.js";
import { itemSecure } from "../config/secure-config.js";
import { ServerOnlyFiles } from "../discovery/server-only-files.js";
import { StartupError } from "../errors/http-error.js";
import { Readiness } from "../health/readiness.js";
import { healthRoutes } from "../health/route.js";
import { answerCors } from "../http/cors.js";
import { createLogger, type Logger } from "../log/logger.js";
import type { ClusterHooks } from "../core/cluster-hooks.js";
import { InFlightCounter } from "../metrics/in-flight.js";
import { metricsRoutes } from "../metrics/route.js";
import type { ProxyVerifier, RpcVerifier } from "../auth/verifier-types.js";
import { createCoreFacade } from "../core/facade.js";
import { checkProxyConfig } from "../proxy/check-config.js";
import { PROXY_METHODS, proxyRoutes } from "../proxy/route.js";
import { rpcRoutes } from "../rpc/route.js";
import { addDevServerTargets } from "../rpc/server-methods.js";
import { MemorySessionStore } from "../state/memory-session-store.js";
import { GuardedSessionStore } from "../state/guarded-session-store.js";
import { SessionStoreMeter } from "../state/measured-session-store.js";
import type { SessionStore } from "../state/session-store.js";
import { RpcRuntime } from "../runtime/runtime.js";
import { describeRateLimits, RateLimits } from "../runtime/rate-limit.js";
import { bindFacadeScope, joinAppServerGlobal } from "../plugin-api/app-server.js";
import type { ServerTargetScope } from "../plugin-api/server-targets.js";
import { serverRouteHandlers } from "../server-routes/route.js";
import type { ServerCore } from "./server-core.js";
import { DEV_CONSOLE_PATH, devConsoleRoutes } from "../static/dev-console.js";
import { createHttpApp } from "./http-app.js";
import { startRedisState, warnDeploymentScopeWithoutRedis, warnRateLimitScopeWithoutRedis } from "./shared-state.js";
import { StartWatch } from "./start-watch.js";
import { redisAddressOf } from "../state/redis-address.js";
import { staticRoutes } from "../static/static-routes.js";

const PACKAGE_ROOT = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
export const DEMO_ROOT = join(PACKAGE_ROOT, "demo");

export interface CreateServerOptions {
  /** The app root (default: the bundled demo app). */
  root?: string;
  /** A config object, or the path of a JSON config file. Default: `<root>/app.config.json` when it exists. */
  config?: AppConfigInput | string;
  dev?: boolean;
  /** Exit at start when a plugin or module fails to load (default: `server.strictStartup`, else false). */
  strict?: boolean;
  port?: number;
  host?: string;
  /** Environment for `<% NAME %>`, `secretEnv`, `APP_SESSION_SECRET` (default `process.env`). */
  env?: NodeJS.ProcessEnv;
  /** Where log lines go (default stdout). */
  logDestination?: DestinationStream | NodeJS.WritableStream;
  logLevel?: string;
  /** Set by a cluster worker (src/cluster/worker.ts): dev logs, status and metrics go through the master. */
  cluster?: ClusterHooks;
  /** Where session data lives, when not in this process: a cluster worker's goes to its master. Redis (`server.redis`) wins over it. */
  sessionStore?: SessionStore;
  /**
   * Check results against their policy's `output` (docs/guides/server-methods.md "Server methods"). Default: in
   * dev mode or with `server.rpc.validateOutput`; the testing kit's `startTestApp` sets it.
   */
  validateOutput?: boolean;
  /** How long a start may go on before a warning names what it waits for, and then how often (default 30 000 ms). */
  startReportAfterMs?: number;
}

export interface AppServer {
  readonly app: FastifyInstance;
  readonly core: ServerCore;
  /** Breakers, queues and the isolation pool (`runtime.status()`). */
  readonly runtime: RpcRuntime;
  readonly log: Logger;
  /** Starts listening; resolves to the URL. */
  listen(): Promise<string>;
  /**
   * Turns not ready and answers new requests 503 while the calls under way finish (the
   * probes still answer), then stops listening and releases everything.
   */
  close(): Promise<void>;
  /** The bound address once listening. */
  address(): { host: string; port: number } | null;
  readonly url: string | null;
}

export async function createServer(options: CreateServerOptions = {}): Promise<AppServer> {
  const env = options.env ?? process.env;
  const root = resolve(options.root ?? DEMO_ROOT);
  await checkRoot(root);
  const readConfigured = await readConfig(root, options.config, env);
  const config: ResolvedConfig = options.strict === undefined ? readConfigured : { ...readConfigured, strictStartup: options.strict };
  const dev = options.dev ?? env.APP_DEV_MODE === "1";
  const { logger: log, ringBuffer, maskSecrets } = createLogger({
    dev,
    destination: options.logDestination,
    level: options.logLevel ?? env.APP_LOG_LEVEL,
    devLogMaxEntries: Number(env.APP_DEV_LOG_MAX_ENTRIES) || 10_000,
    secrets: [...config.secrets, env.APP_SESSION_SECRET ?? ""],
    devLogSink: options.cluster?.logSink,
  });
  const startWatch = new StartWatch(log, "the app root to be scanned", options.startReportAfterMs);
  const { secret, generated } = sessionSecretFrom(env);
  if (generated) log.warn("APP_SESSION_SECRET is not set: using a random secret, so sessions end when the server restarts");

  const rpcVerifiers = new VerifierRegistry<RpcVerifier>("RPC");
  const proxyVerifiers = new VerifierRegistry<ProxyVerifier>("proxy");
  const outbound = { allow: config.outbound.allow, timeoutMs: config.outbound.timeoutMs };
  const global = joinAppServerGlobal({
    dev,
    outbound,
    registerRpcAuthVerifier: (name, fn) => rpcVerifiers.register(name, fn, "a boot hook (through APP_SERVER)"),
    registerProxyAuthVerifier: (name, fn) => proxyVerifiers.register(name, fn, "a boot hook (through APP_SERVER)"),
  });
  // What a failed start must release besides the global: connections opened on the way.
  const closeOnFailure: Array<() => Promise<void> | undefined> = [];
  try {
    return await assemble();
  } catch (error) {
    global.leave();
    await Promise.all(closeOnFailure.map((close) => close()));
    throw error;
  } finally {
    startWatch.stop();
  }

  async function assemble(): Promise<AppServer> {
    // Built-in verifiers first, so that a boot hook may replace them.
    const builtinJwt = new BuiltinJwtVerifiers(config, env).register({ rpcVerifiers, proxyVerifiers });

    const serverOnlyFiles = new ServerOnlyFiles(log);
    const serverRoutes = new ServerRoutes();
    const moduleGraph = dev ? new ModuleGraph() : undefined;
    const registry = await global.boot(() => discover({
      root,
      dev,
      config,
      log,
      serverOnlyFiles,
      serverRoutes,
      moduleGraph,
      onWaiting: (what) => startWatch.waitingFor(what),
      onItemFailed: (item) => {
        rpcVerifiers.removeOwner(`${item.kind} ${item.id}`);
        proxyVerifiers.removeOwner(`${item.kind} ${item.id}`);
      },
      // The APP_SERVER helpers, and what only a boot may do.
      bootApi: (item) => ({
        ...globalThis.APP_SERVER,
        registerRpcAuthVerifier: (name, fn) => rpcVerifiers.register(name, fn, `${item.kind} ${item.id}`),
        registerProxyAuthVerifier: (name, fn) => proxyVerifiers.register(name, fn, `${item.kind} ${item.id}`),
        registerServerRoute: (prefix, handler) => serverRoutes.register(item.kind, item.id, prefix, handler),
        config: config.itemConfig(item.kind, item.id),
        log: log.child({ [item.kind]: item.id }),
        dev,
        kind: item.kind,
        id: item.id,
      }),
    }));
    naming(registry, () => {
      checkRpcVerifierNames(config.rpcVerifiers, rpcVerifiers);
      checkProxyConfig(config, proxyVerifiers);
      builtinJwt.checkSettings({ rpcVerifiers, proxyVerifiers });
    });
    const facade = createCoreFacade({ dev, secure: itemSecure("server", "", Object.freeze({}), config.rpcVerifierView), domain: config.publicOrigin });
    const targetScope = serverTargetScope(registry, dev);
    for (const target of [...registry.all(), { facade }]) bindFacadeScope(target.facade, targetScope);
    const devReload = moduleGraph && new DevReload({
      root,
      registry,
      serverOnlyFiles,
      moduleGraph,
      config,
      log,
      adopt(target) {
        targetScope.itemDirs.set(`${target.kind}/${target.id}`, target.dir);
        bindFacadeScope(target.facade, targetScope);
      },
      // Reloads happen once the server runs, when `rateLimits` is there.
      methodsBuilt: (target) => rateLimits.bind(target),
    });
    warnSessionlessMethods(registry.all(), log);
    warnDeploymentScopeWithoutRedis(registry.all(), config, log);
    warnRateLimitScopeWithoutRedis(registry.all(), config, log);
    // Session data (`redisState.sessionStore`), breakers and deployment-wide slots, when
    // `server.redis` is set; closed with the server, or at once if the start fails.
    if (config.redis) startWatch.waitingFor(`Redis at ${redisAddressOf(config.redis.url)}`);
    const redisState = await startRedisState(config, log);
    startWatch.waitingFor("the server to be assembled");
    closeOnFailure.push(() => redisState?.close());

    const sessions = new SessionSigner(secret, config.sessionTtlSec);
    const sessionMeter = config.metrics.enabled ? new SessionStoreMeter() : null;
    // Redis wins: with it every process and host shares one session.
    const sessionStores = sessionStoreFor(redisState?.sessionStore ?? options.sessionStore, config, sessionMeter);
    const guarded = sessionStores.store;
    if (redisState && guarded instanceof GuardedSessionStore) redisState.connection.onReconnect(() => guarded.reachable());
    const core: ServerCore = {
      root,
      dev,
      config,
      log,
      maskSecrets,
      ringBuffer,
      registry,
      serverOnlyFiles,
      devReload,
      sessions,
      sessionChecks: new SessionCheck(sessions),
      rpcVerifiers,
      proxyVerifiers,
      startedAt: Date.now(),
      version: await packageVersion(),
      events: { rpc: [], proxy: [] },
      facade,
      serverRoutes,
      sessionStore: sessionStores.store,
    };
    const runtime = new RpcRuntime({
      dev,
      validateOutput: options.validateOutput ?? (dev || config.rpc.validateOutput),
      isolation: config.rpc.isolation, outbound, itemDirs: targetScope.itemDirs, shared: redisState });
    await runtime.warmUp(registry.all().flatMap((target) => [...target.methods.values()]));
    const rateLimits = new RateLimits({ redis: redisState?.connection ?? null, log });
    for (const target of registry.all()) rateLimits.bind(target);
    const configuredLimits = () => describeRateLimits(registry.all().flatMap((target) => [...target.methods.values()]), config.proxies, redisState !== null);
    // rate-limiter-flexible loads with the first call a limit counts (docs/guides/server-methods.md "Rate limits").
    const inFlight = new InFlightCounter();
    // getStatus also says where session data lives, and how much the in-memory store holds.
    const sessionStoreStatus = () => ({ kind: core.sessionStore.kind, ...sessionStores.memory?.size });
    if (dev) {
      addDevServerTargets(registry, core, {
        runtimeStatus: () => ({ ...runtime.status(), sessionStore: sessionStoreStatus(), rateLimits: configuredLimits() }),
        inFlight: () => inFlight.snapshot(),
        cluster: options.cluster,
      });
    }

    // Without its Redis a process answers 503 to every call that uses session data or a
    // deployment-wide slot: it says it is not ready rather than take that traffic.
    const readiness = new Readiness(redisState ? [{ name: "redis", ok: () => redisState.ready }] : []);
    const { app, startClosing } = createHttpApp(log, config);
    inFlight.attach(app.server);
    // Each part takes the narrow options it declares; `core` has every field they name.
    // CORS for `server.allowedOrigins` on these two only: every other route is for this origin.
    await app.register(async (scope) => {
      answerCors(scope, { allowedOrigins: config.allowedOrigins, methods: ["POST"] });
      await scope.register(rpcRoutes, { ...core, runtime });
    });
    await app.register(async (scope) => {
      answerCors(scope, { allowedOrigins: config.allowedOrigins, methods: PROXY_METHODS });
      await scope.register(proxyRoutes, { ...core, rateLimits });
    });
    await app.register(serverRouteHandlers, core);
    await app.register(healthRoutes, { readiness });
    await app.register(staticRoutes, core);
    await app.register(metricsRoutes, { ...core, runtime, inFlight, cluster: options.cluster, sessionMeter });
    await app.register(devConsoleRoutes, core);

    let url: string | null = null;
    const server: AppServer = {
      app,
      core,
      runtime,
      log,
      get url() {
        return url;
      },
      address() {
        const address = app.server.address();
        return address && typeof address === "object" ? { host: address.address, port: address.port } : null;
      },
      async listen() {
        const host = options.host ?? "127.0.0.1";
        const port = options.port ?? 8080;
        const listenWatch = new StartWatch(log, `the port ${port} on ${host}`, options.startReportAfterMs);
        try {
          // Listening on the ready instance's server ourselves: app.listen() would log its own
          // "Server listening" line, and the ready line is ours, printed once below.
          await app.ready();
          await new Promise<void>((resolve, reject) => {
            app.server.once("error", reject);
            app.server.listen(port, host, () => {
              app.server.off("error", reject);
              resolve();
            });
          });
        } catch (error) {
          const code = (error as NodeJS.ErrnoException).code;
          if (code === "EADDRINUSE") throw new StartupError("STARTUP_LISTEN_FAILED", `port ${port} on ${host} is already in use`);
          if (code === "EACCES") throw new StartupError("STARTUP_LISTEN_FAILED", `no permission to listen on ${host}:${port}`);
          if (code === "EADDRNOTAVAIL" || code === "ENOTFOUND") throw new StartupError("STARTUP_LISTEN_FAILED", `cannot listen on host ${host}`);
          throw error;
        } finally {
          listenWatch.stop();
        }
        const bound = server.address()!;
        url = `http://${bound.host.includes(":") ? `[${bound.host}]` : bound.host}:${bound.port}`;
        readiness.listening();
        // In a cluster the master prints the one ready line, once every worker listens.
        log.info({ url, dev, root }, options.cluster ? `worker ready at ${url}` : `listening on ${url}`);
        // The console's address is what a developer opens next; a cluster's master prints it once.
        if (dev && !options.cluster) log.info({ devConsole: url + DEV_CONSOLE_PATH }, `dev console at ${url}${DEV_CONSOLE_PATH}`);
        return url;
      },
      async close() {
        readiness.draining();
        startClosing();
        try {
          // Still listening until the answers under way are out, so that probes keep
          // answering (ready: draining, live: ok) while load balancers take this process out
          // of rotation; new work meanwhile answers 503 SERVICE_UNAVAILABLE.
          await inFlight.whenIdle();
          await app.close();
          await runtime.close();
          await core.sessionStore.close();
          await redisState?.close();
        } finally {
          global.leave();
        }
      },
    };
    return server;
  }
}

/**
 * A store in another process (Redis, the cluster's master) is guarded against hanging; the
 * default is this process's memory (`memory`, kept for getStatus's sizes). With metrics on,
 * the store's own answers are timed, inside the guard.
 */
function sessionStoreFor(
  remote: SessionStore | undefined,
  config: ResolvedConfig,
  meter: SessionStoreMeter | null,
): { store: SessionStore; memory: MemorySessionStore | null } {
  const measured = (store: SessionStore) => meter?.measure(store) ?? store;
  if (remote) return { store: new GuardedSessionStore(measured(remote)), memory: null };
  const memory = new MemorySessionStore(config.session.maxEntries, config.session.maxBytes);
  return { store: measured(memory), memory };
}

export async function checkRoot(root: string): Promise<void> {
  try {
    const info = await stat(root);
    if (!info.isDirectory()) throw new StartupError("STARTUP_ROOT_UNREADABLE", `app root ${root} is not a directory`);
    await access(root, constants.R_OK | constants.X_OK);
  } catch (error) {
    if (error instanceof StartupError) throw error;
    throw new StartupError("STARTUP_ROOT_UNREADABLE", `cannot read app root ${root}: ${(error as NodeJS.ErrnoException).code ?? error}`);
  }
}

export async function readConfig(root: string, config: CreateServerOptions["config"], env: NodeJS.ProcessEnv): Promise<ResolvedConfig> {
  if (config !== undefined && typeof config !== "string") return parseConfig(config, env);
  const file = config ?? join(root, "app.config.json");
  const exists = await stat(file).then(() => true, () => false);
  if (!exists) {
    if (config !== undefined) throw new StartupError("STARTUP_CONFIG_UNREADABLE", `config file ${file} does not exist`);
    return parseConfig({}, env);
  }
  return loadConfigFile(file, env);
}

/** How server files are reached from a `ctx` of this server (APP_SERVER.importServerModule); dev mode adds items found later to `itemDirs`. */
function serverTargetScope(registry: Registry, dev: boolean): ServerTargetScope & { itemDirs: Map<string, string> } {
  const itemDirs = new Map<string, string>();
  for (const target of registry.all()) if (target.kind !== "server") itemDirs.set(`${target.kind}/${target.id}`, target.dir);
  if (!dev) return { itemDirs, importFile: (file) => importServerFile(file), resolved: new Map() };
  // The version a dev reload loaded, so that every import of a file gets its one instance.
  return { itemDirs, importFile: (file) => importServerFile(file, registry.fileVersion(file)) };
}

/** A config check that fails because an item failed (its verifier never registered, say) names that item. */
function naming(registry: Registry, check: () => void): void {
  try {
    check();
  } catch (error) {
    const failed = registry.failed();
    if (!(error instanceof StartupError) || failed.length === 0) throw error;
    throw new StartupError("STARTUP_ITEM_FAILED", `${error.message} (failed to load: ${failed.map((item) => `${item.kind} ${item.id}`).join(", ")})`, { cause: error });
  }
}

function warnSessionlessMethods(targets: Target[], log: Logger): void {
  for (const target of targets) {
    for (const entry of target.methods.values()) {
      if (!entry.policy.requireSession && entry.policy.public !== true) {
        log.warn(
          { kind: entry.kind, id: entry.id, method: entry.name },
          `${entry.key} has requireSession: false: it is reachable without a session and relies on verifiers alone`,
        );
      }
    }
  }
}

let versionCache: string | undefined;
async function packageVersion(): Promise<string> {
  versionCache ??= (JSON.parse(await readFile(join(PACKAGE_ROOT, "package.json"), "utf8")) as { version: string }).version;
  return versionCache;
}
