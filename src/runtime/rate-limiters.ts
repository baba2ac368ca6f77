/**
 * The counters behind rate limits (docs/guides/server-methods.md "Rate limits"), from rate-limiter-flexible: in
 * this process's memory, or for `scope: "deployment"` in the Redis of `server.redis`,
 * counted atomically by one Lua script per call. Loaded by ./rate-limit.ts only when some
 * method or proxy alias has a `rateLimit`, so a server without one never loads the library.
 *
 * Windows are fixed: the first call of a caller opens `durationMs`, and a call refused
 * within it does not move its end, so a call made once it has passed is admitted.
 */
import { RateLimiterMemory, RateLimiterRedis, type RateLimiterAbstract } from "rate-limiter-flexible";
import type { ResolvedRateLimit } from "../discovery/policy.js";
import type { RedisConnection } from "../state/redis-connection.js";

/**
 * rate-limiter-flexible's own script with a millisecond window: its script takes whole
 * seconds (`durationMs: 1500` would be counted for 1 s). ARGV[4] is the limiter's duration
 * in seconds, fractional; the library sends ARGV[2], the whole seconds, only when there is
 * at least one, which the config schema ensures for the deployment scope.
 */
const INCREMENT_WITH_MS_WINDOW = `local ms = math.floor(tonumber(ARGV[4]) * 1000 + 0.5)
redis.call('set', KEYS[1], 0, 'PX', ms, 'NX')
local consumed = redis.call('incrby', KEYS[1], ARGV[1])
local ttl = redis.call('pttl', KEYS[1])
if ttl == -1 then
  redis.call('pexpire', KEYS[1], ms)
  ttl = ms
end
return {consumed, ttl}`;

/** The per-process counter that stands in for Redis while it cannot be reached, saying so once used. */
class FallbackLimiter extends RateLimiterMemory {
  readonly #onUse: () => void;

  constructor(options: ConstructorParameters<typeof RateLimiterMemory>[0], onUse: () => void) {
    super(options);
    this.#onUse = onUse;
  }

  override consume(...args: Parameters<RateLimiterMemory["consume"]>): ReturnType<RateLimiterMemory["consume"]> {
    this.#onUse();
    return super.consume(...args);
  }
}

/**
 * One limit's counter. `keyPrefix` names the method (or alias) and the limit's place in its
 * list; with Redis, `server.redis.keyPrefix` is put before it by the connection.
 */
export function createLimiter(limit: ResolvedRateLimit, keyPrefix: string, redis: RedisConnection | null, onFallback: () => void): RateLimiterAbstract {
  const options = { points: limit.points, duration: limit.durationMs / 1000, keyPrefix };
  if (limit.scope !== "deployment" || !redis) return new RateLimiterMemory(options);
  return new RateLimiterRedis({
    ...options,
    storeClient: redis.client,
    customIncrTtlLuaScript: INCREMENT_WITH_MS_WINDOW,
    // Straight to the per-process counter while disconnected, instead of a command that is
    // refused anyway (the connection queues nothing); a command that times out
    // (`commandTimeoutMs`) ends there too. Never unlimited.
    rejectIfRedisNotReady: true,
    insuranceLimiter: new FallbackLimiter(options, onFallback),
  });
}
