/**
 * Dev-mode methods under `/__rpc/server/…` (README "Dev mode"): `core/getStatus`,
 * `core/getLogs` and the compatibility alias `dev/getLogs`. They exist only in dev mode;
 * otherwise the `server` kind has no targets and they answer 404 RPC_UNKNOWN_TARGET.
 * They need a session and CSRF like any default method. In a cluster worker both answer
 * for the whole cluster: logs from the master's one buffer, status listing every worker.
 */
import type { ClusterHooks, ProcessStatus } from "../core/cluster-hooks.js";
import { errorOf } from "../errors/http-error.js";
import type { MethodEntry, Registry, Target } from "../discovery/registry.js";
import type { ResolvedConfig } from "../config/resolve.js";
import type { LogRingBuffer } from "../log/ring-buffer.js";
import { resolvePolicy } from "../discovery/policy.js";
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
  config: Pick<ResolvedConfig, "rpc">;
  /** The server's own `ctx.core`. */
  facade: CoreFacade;
}

export function addDevServerTargets(registry: Registry, core: DevServerInfo, sources: StatusSources): void {
  const { cluster } = sources;
  const getLogs = (_ctx: unknown, payload?: { afterId?: unknown; limit?: unknown }) => {
    const afterId = integerOr(payload?.afterId, 0, "afterId");
    const limit = Math.min(integerOr(payload?.limit, 100, "limit"), 1000);
    if (cluster) return cluster.readLogs(afterId, Math.max(0, limit));
    if (!core.ringBuffer) return { entries: [], lastId: 0 };
    return core.ringBuffer.read(afterId, Math.max(0, limit));
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
  const getStatus = async () => ({
    pid: process.pid,
    uptimeSec: Math.round((Date.now() - core.startedAt) / 1000),
    version: core.version,
    node: process.version,
    dev: core.dev,
    memory: process.memoryUsage(),
    registry: describeRegistry(registry),
    /** Plugins and modules that failed to load (their calls answer 503); why is in the log. */
    failed: registry.failed().map(({ kind, id, file }) => ({ kind, id, file })),
    ...sources.runtimeStatus(),
    mode: cluster ? "cluster" : "single",
    ...(cluster ? await cluster.clusterStatus() : { workers: [processStatus()] }),
  });
  const logs = getLogs as MethodEntry["fn"];
  registry.add(serverTarget(core, "core", { getStatus, getLogs: logs }));
  registry.add(serverTarget(core, "dev", { getLogs: logs }));
}

function serverTarget(core: DevServerInfo, id: string, fns: Record<string, MethodEntry["fn"]>): Target {
  const methods = new Map<string, MethodEntry>();
  for (const [name, fn] of Object.entries(fns)) {
    const key = `server/${id}/${name}`;
    methods.set(name, { kind: "server", id, name, key, fn, file: undefined, fileVersion: undefined, policy: resolvePolicy(undefined, core.config.rpc, key, `server/${id}`) });
  }
  return { kind: "server", id, dir: "", files: [], methods, config: {}, secure: core.facade.server.secure, facade: core.facade, failure: undefined };
}

function integerOr(value: unknown, fallback: number, name: string): number {
  if (value === undefined || value === null) return fallback;
  if (typeof value !== "number" || !Number.isInteger(value) || value < 0) {
    throw errorOf("RPC_BAD_REQUEST", { reason: `${name}-not-integer` }, `${name} must be a non-negative integer`);
  }
  return value;
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
        policy: { ...entry.policy, public: typeof entry.policy.public === "function" ? "function" : entry.policy.public },
      })),
    }));
}
