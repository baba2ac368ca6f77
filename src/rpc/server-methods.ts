/**
 * Dev-mode methods under `/__rpc/server/…` (CONTRACT section 5): `core/getStatus`,
 * `core/getLogs` and the compatibility alias `dev/getLogs`. They exist only in dev mode;
 * otherwise the `server` kind has no targets and they answer 404 RPC_UNKNOWN_TARGET.
 * They need a session and CSRF like any default method.
 */
import { errorOf } from "../errors/http-error.js";
import type { MethodEntry, Registry, Target } from "../discovery/registry.js";
import type { ServerCore } from "../server/core.js";
import { resolvePolicy } from "./policy.js";

export interface StatusSources {
  runtimeStatus(): Record<string, unknown>;
}

export function addDevServerTargets(registry: Registry, core: ServerCore, sources: StatusSources): void {
  const getLogs = (_ctx: unknown, payload?: { afterId?: unknown; limit?: unknown }) => {
    if (!core.ringBuffer) return { entries: [], lastId: 0 };
    const afterId = integerOr(payload?.afterId, 0, "afterId");
    const limit = Math.min(integerOr(payload?.limit, 100, "limit"), 1000);
    return core.ringBuffer.read(afterId, Math.max(0, limit));
  };
  const getStatus = () => ({
    pid: process.pid,
    uptimeSec: Math.round((Date.now() - core.startedAt) / 1000),
    version: core.version,
    node: process.version,
    dev: core.dev,
    memory: process.memoryUsage(),
    registry: describeRegistry(registry),
    ...sources.runtimeStatus(),
  });
  const logs = getLogs as MethodEntry["fn"];
  registry.add(serverTarget(core, "core", { getStatus, getLogs: logs }));
  registry.add(serverTarget(core, "dev", { getLogs: logs }));
}

function serverTarget(core: ServerCore, id: string, fns: Record<string, MethodEntry["fn"]>): Target {
  const methods = new Map<string, MethodEntry>();
  for (const [name, fn] of Object.entries(fns)) {
    const key = `server/${id}/${name}`;
    methods.set(name, { kind: "server", id, name, key, fn, file: undefined, fileVersion: 0, policy: resolvePolicy(undefined, core.config.rpc, key) });
  }
  return { kind: "server", id, dir: "", files: [], methods, config: {} };
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
