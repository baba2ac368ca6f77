/**
 * The composition of state shared across processes (docs/guides/deployment.md "Shared state and
 * Redis"): the Redis state when `server.redis` is set, and the start-up warning for
 * deployment-wide limits that have no Redis to count on.
 */
import type { ResolvedConfig } from "../config/resolve.js";
import type { Target } from "../discovery/registry.js";
import { resolveRateLimits, type ResolvedRateLimit } from "../discovery/policy.js";
import type { Logger } from "../log/logger.js";
import type { RedisState } from "../state/redis-state.js";

/**
 * Connects to `server.redis`, waiting at most `commandTimeoutMs` for it: a Redis that is
 * not there yet does not stop the server (the connection logs it, and reconnects). ioredis
 * and redis-semaphore are loaded only here, so a server without Redis never loads them.
 */
export async function startRedisState(config: ResolvedConfig, log: Logger): Promise<RedisState | null> {
  if (!config.redis) return null;
  const { createRedisState } = await import("../state/redis-state.js");
  const state = createRedisState(config.redis, log);
  await state.connection.whenReady(config.redis.commandTimeoutMs);
  return state;
}

/**
 * Without Redis a deployment-wide limit can only count this process's calls: said once at
 * start, naming the methods, so that an operator does not take the limit for a global one.
 */
export function warnDeploymentScopeWithoutRedis(targets: Target[], config: ResolvedConfig, log: Logger): void {
  if (config.redis) return;
  const methods = targets.flatMap((target) =>
    [...target.methods.values()].filter((entry) => entry.policy.concurrencyScope === "deployment" && entry.policy.maxConcurrency !== undefined).map((entry) => entry.key),
  );
  if (methods.length === 0) return;
  log.warn(
    { methods },
    `concurrencyScope "deployment" needs server.redis: without it maxConcurrency counts each process's calls only (${methods.join(", ")})`,
  );
}

/**
 * The same for `rateLimit` with `scope: "deployment"`, of methods and proxy aliases: without
 * Redis each process counts its own calls, so N processes admit up to N × points.
 */
export function warnRateLimitScopeWithoutRedis(targets: Target[], config: ResolvedConfig, log: Logger): void {
  if (config.redis) return;
  const deploymentWide = (limits: readonly ResolvedRateLimit[] | undefined) => limits?.some((limit) => limit.scope === "deployment") === true;
  const methods = targets.flatMap((target) => [...target.methods.values()].filter((entry) => deploymentWide(entry.policy.rateLimit)).map((entry) => entry.key));
  for (const [alias, proxy] of config.proxies) if (deploymentWide(resolveRateLimits(proxy.rateLimit))) methods.push(`proxy/${alias}`);
  if (methods.length === 0) return;
  log.warn(
    { methods },
    `rateLimit scope "deployment" needs server.redis: without it each process counts its own calls (${methods.join(", ")})`,
  );
}
