/**
 * Dev-mode methods under `/__rpc/server/…` (docs/guides/server-methods.md "Dev mode"): `core/getStatus`,
 * `core/getLogs` and the compatibility alias `dev/getLogs`. They exist only in dev mode;
 * otherwise the `server` kind has no targets and they answer 404 RPC_UNKNOWN_TARGET.
 * They need a session and CSRF like any default method. In a cluster worker both answer
 * for the whole cluster: logs from the master's one buffer, status listing every worker.
 * Both carry, beside their own fields, the ones xOpat's viewer reads (`devMode`, `scope`,
 * the log filters and paging facts), so its plugins work against either server.
 */
import type { ClusterHooks, ProcessStatus } from "../core/cluster-hooks.js";
import type { MethodEntry, Registry, Target } from "../discovery/registry.js";
import type { ResolvedConfig } from "../config/resolve.js";
import type { LogRingBuffer } from "../log/ring-buffer.js";
import type { SecretMask } from "../log/mask-secrets.js";
import { parseLogQuery } from "../log/log-query.js";
import { describeLogBuffer, readLogPage } from "../log/log-page.js";
import { resolvePolicy } from "../discovery/policy.js";
import { mayUseSession } from "../discovery/session-use.js";
import type { CoreFacade } from "../core/facade.js";

export interface StatusSources {
  runtimeStatus(): Record<string, unknown>;
  /** Requests and RPC calls being served by this process. */
  inFlight(): { requests: number; rpc: number };
  /** In a cluster worker, logs and the list of workers come from the master (src/cluster/). */
  cluster?: ClusterHooks | undefined;
}

/** What the dev methods report about the server they are part of. */
export interface DevServerInfo {
  dev: boolean;
  startedAt: number;
  version: string;
  ringBuffer: LogRingBuffer | null;
  /** Masks configured secrets (a load error may quote a line of code); null when there are none. */
  maskSecrets: SecretMask | null;
  config: Pick<ResolvedConfig, "rpc">;
  /** The server's own `ctx.core`. */
  facade: CoreFacade;
}

export function addDevServerTargets(registry: Registry, core: DevServerInfo, sources: StatusSources): void {
  const { cluster } = sources;
  const getLogs = (scope: string) => async (_ctx: unknown, payload?: unknown) => {
    const query = parseLogQuery(payload);
    const page = cluster ? await cluster.readLogs(query) : readLogPage(core.ringBuffer, query);
    return { devMode: true, scope, ...page };
  };
  // This process's share of the status; in a cluster the master gathers it from each worker.
  const processStatus = (): ProcessStatus => {
    const memory = process.memoryUsage();
    return {
      pid: process.pid,
      uptimeSec: Math.round((Date.now() - core.startedAt) / 1000),
      startedAt: core.startedAt,
      inFlight: sources.inFlight(),
      memory: { rss: memory.rss, heapUsed: memory.heapUsed },
      ...sources.runtimeStatus(),
    };
  };
  cluster?.serveStatus(processStatus);
  const getStatus = async (_ctx: unknown, payload?: unknown) => {
    const now = Date.now();
    // xOpat's viewer asks for counts only with `includeRegistry: false`; the detailed list goes too.
    const withRegistry = !(typeof payload === "object" && payload !== null && (payload as { includeRegistry?: unknown }).includeRegistry === false);
    return {
      devMode: true,
      scope: "server/core/getStatus",
      pid: process.pid,
      uptimeSec: Math.round((now - core.startedAt) / 1000),
      uptimeMs: now - core.startedAt,
      startedAt: new Date(core.startedAt).toISOString(),
      now: new Date(now).toISOString(),
      version: core.version,
      node: process.version,
      platform: process.platform,
      arch: process.arch,
      dev: core.dev,
      memory: process.memoryUsage(),
      ...(withRegistry ? { registry: describeRegistry(registry) } : {}),
      registrySummary: summarizeRegistry(registry, withRegistry),
      /** Plugins and modules that failed to load (their calls answer 503), and why: where to fix it, as the log says. */
      failed: registry.failed().map(({ kind, id, file, message }) => ({ kind, id, file, message: core.maskSecrets?.(message) ?? message })),
      ...sources.runtimeStatus(),
      mode: cluster ? "cluster" : "single",
      // In a cluster, `logBuffer` describes the master's buffer, the one getLogs reads.
      ...(cluster ? await cluster.clusterStatus() : { workers: [processStatus()], logBuffer: describeLogBuffer(core.ringBuffer) }),
    };
  };
  registry.add(serverTarget(core, "core", { getStatus, getLogs: getLogs("server/core/getLogs") }));
  registry.add(serverTarget(core, "dev", { getLogs: getLogs("server/dev/getLogs") }));
}

function serverTarget(core: DevServerInfo, id: string, fns: Record<string, MethodEntry["fn"]>): Target {
  const methods = new Map<string, MethodEntry>();
  for (const [name, fn] of Object.entries(fns)) {
    const key = `server/${id}/${name}`;
    methods.set(name, { kind: "server", id, name, key, fn, file: undefined, fileVersion: undefined, policy: resolvePolicy(undefined, core.config.rpc, key, `server/${id}`), usesSession: mayUseSession(fn) });
  }
  return { kind: "server", id, dir: "", files: [], methods, config: {}, secure: core.facade.server.secure, facade: core.facade, failure: undefined };
}

/** Plugins and modules with their methods and policies, as plain JSON. */
export function describeRegistry(registry: Registry) {
  return registry
    .all()
    .filter((target) => target.kind !== "server")
    .map((target) => ({
      kind: target.kind,
      id: target.id,
      methods: [...target.methods.values()].map((entry) => ({
        name: entry.name,
        file: entry.file,
        policy: {
          ...entry.policy,
          public: typeof entry.policy.public === "function" ? "function" : entry.policy.public,
          // A validator is a library's object (large, and not meant for JSON): its vendor says enough.
          input: entry.policy.input && entry.policy.input["~standard"].vendor,
          output: entry.policy.output && entry.policy.output["~standard"].vendor,
          errors: entry.policy.errors && Object.fromEntries(entry.policy.errors),
        },
      })),
    }));
}

/**
 * xOpat's shape of the registry: counts and sorted ids (counts only without `withIds`).
 * It sits beside `registry`, which stays the detailed list the dev console reads.
 */
export function summarizeRegistry(registry: Registry, withIds: boolean) {
  const idsOf = (kind: string) =>
    registry
      .all()
      .filter((target) => target.kind === kind)
      .map((target) => target.id)
      .sort();
  const plugins = idsOf("plugin");
  const modules = idsOf("module");
  return { pluginCount: plugins.length, moduleCount: modules.length, ...(withIds ? { plugins, modules } : {}) };
}
