/**
 * Rate limits (docs/guides/server-methods.md "Rate limits"): the step the RPC gateway and the proxy run for a
 * method or alias with a `rateLimit`, once its caller is known and before its body is read
 * (a `user` limit: right after the verifiers). A method without one has no step at all.
 *
 * A refused call answers 429 with `details.retryAfterMs` (and `Retry-After`), before any
 * slot, queue or breaker sees it, and takes no points: of a list of limits, those that
 * admitted it get theirs back. Limits counted in this process are ./window-counter.ts;
 * deployment-wide ones use rate-limiter-flexible (./rate-limiters.ts), loaded by the first
 * call such a limit counts (a few milliseconds, once): a server whose limited methods are
 * not called never holds it (about 0.7 MB).
 */
import type { RateLimiterAbstract } from "rate-limiter-flexible";
import { resolveRateLimits, type RateLimit, type ResolvedRateLimit } from "../discovery/policy.js";
import { errorOf, type HttpError } from "../errors/http-error.js";
import type { Logger } from "../log/logger.js";
import type { RedisConnection } from "../state/redis-connection.js";
import type { MethodRateLimit, Target } from "../discovery/registry.js";
import { WindowCounter } from "./window-counter.js";

export type RateLimitedCode = "RPC_RATE_LIMITED" | "PROXY_RATE_LIMITED";

type Factory = typeof import("./rate-limiters.js");

export interface RateLimitsOptions {
  /** `server.redis`'s connection: deployment-wide limits count there. Null: every limit counts per process. */
  redis: RedisConnection | null;
  log: Logger;
}

/** The steps of one server, one per method or alias, made on first use. */
export class RateLimits {
  readonly #options: RateLimitsOptions;
  #factory: Promise<Factory> | null = null;
  // By the resolved list itself: a dev reload that changes a policy makes a new list, and
  // with it new counters.
  readonly #steps = new WeakMap<readonly ResolvedRateLimit[], RateLimitStep>();
  #fellBack = false;

  constructor(options: RateLimitsOptions) {
    this.#options = options;
    // One warning per outage: the next one is said again.
    options.redis?.onReconnect(() => {
      this.#fellBack = false;
    });
  }

  /** `name` is `kind/id/method`, or `proxy/<alias>`: it names the counters (and their Redis keys). */
  step(limits: readonly ResolvedRateLimit[], name: string, code: RateLimitedCode): RateLimitStep {
    let step = this.#steps.get(limits);
    if (!step) {
      // Counted in this process (no limit of the list on Redis): no library, no promise.
      const local = this.#options.redis === null || limits.every((limit) => limit.scope !== "deployment");
      step = new RateLimitStep(limits, name, code, local ? null : () => this.#limiters(limits, name));
      this.#steps.set(limits, step);
    }
    return step;
  }

  /**
   * Gives each method of `target` with a `rateLimit` its step, once, when the method is
   * loaded (at start, and by a dev reload): the gateway reads it off the method.
   */
  bind(target: Target): void {
    for (const entry of target.methods.values()) {
      if (entry.policy.rateLimit) entry.rateLimitStep = this.step(entry.policy.rateLimit, entry.key, "RPC_RATE_LIMITED");
    }
  }

  #load(): Promise<Factory> {
    this.#factory ??= import("./rate-limiters.js");
    return this.#factory;
  }

  async #limiters(limits: readonly ResolvedRateLimit[], name: string): Promise<RateLimiterAbstract[]> {
    const { createLimiter } = await this.#load();
    const { redis } = this.#options;
    return limits.map((limit, index) => createLimiter(limit, `ratelimit:${name}:${index}`, redis, () => this.#fallBack()));
  }

  #fallBack(): void {
    if (this.#fellBack) return;
    this.#fellBack = true;
    const address = this.#options.redis?.address;
    this.#options.log.warn(
      { redis: address },
      `rate limits: Redis at ${address} cannot be reached: deployment-wide limits count in each process until it returns (up to points × processes may pass meanwhile)`,
    );
  }
}

/** The check of one method or alias: its limits before the body (`early`), its `user` limits after the verifiers (`late`). */
export class RateLimitStep implements MethodRateLimit {
  /** True when some limit is checked before the body; false: nothing to do there. */
  readonly early: boolean;
  /** True when some limit has `key: "user"`, checked once the verifiers have run. */
  readonly late: boolean;
  readonly #limits: readonly ResolvedRateLimit[];
  readonly #name: string;
  readonly #code: RateLimitedCode;
  readonly #earlyIndexes: readonly number[];
  readonly #lateIndexes: readonly number[];
  /** Null when every limit counts in this process: `#counters` then. */
  readonly #make: (() => Promise<RateLimiterAbstract[]>) | null;
  readonly #counters: readonly WindowCounter[] | null;
  #limiters: RateLimiterAbstract[] | null = null;
  #making: Promise<RateLimiterAbstract[]> | null = null;

  constructor(limits: readonly ResolvedRateLimit[], name: string, code: RateLimitedCode, make: (() => Promise<RateLimiterAbstract[]>) | null) {
    this.#limits = limits;
    this.#name = name;
    this.#code = code;
    this.#make = make;
    this.#counters = make ? null : limits.map((limit) => new WindowCounter(limit.points, limit.durationMs));
    this.#earlyIndexes = limits.flatMap((limit, index) => (limit.key === "user" ? [] : [index]));
    this.#lateIndexes = limits.flatMap((limit, index) => (limit.key === "user" ? [index] : []));
    this.early = this.#earlyIndexes.length > 0;
    this.late = this.#lateIndexes.length > 0;
  }

  get name(): string {
    return this.#name;
  }

  /**
   * Takes a point of each limit of the phase for this caller. Resolves to null when all
   * admit the call, else to the 429 to answer (the points taken are given back, and in the
   * late phase the early ones too). `session` is the verified session's id, `ip` the client
   * address as `trustProxy` reads it, `user` the verifiers' `user.sub`. At once, without a
   * promise, when every limit counts in this process.
   */
  check(late: boolean, session: string | null, ip: string, user: string | null): HttpError | null | Promise<HttpError | null> {
    return this.#counters ? this.#checkHere(this.#counters, late, session, ip, user) : this.#checkShared(late, session, ip, user);
  }

  #checkHere(counters: readonly WindowCounter[], late: boolean, session: string | null, ip: string, user: string | null): HttpError | null {
    const indexes = late ? this.#lateIndexes : this.#earlyIndexes;
    const now = Date.now();
    let retryAfterMs = 0;
    if (indexes.length === 1) {
      const index = indexes[0]!;
      retryAfterMs = counters[index]!.consume(this.#keyOf(index, session, ip, user), now);
    } else {
      const waits = indexes.map((index) => counters[index]!.consume(this.#keyOf(index, session, ip, user), now));
      for (const wait of waits) retryAfterMs = Math.max(retryAfterMs, wait);
      if (retryAfterMs > 0) waits.forEach((wait, at) => wait === 0 && counters[indexes[at]!]!.reward(this.#keyOf(indexes[at]!, session, ip, user)));
    }
    if (retryAfterMs === 0) return null;
    if (late) for (const index of this.#earlyIndexes) counters[index]!.reward(this.#keyOf(index, session, ip, user));
    return errorOf(this.#code, { retryAfterMs });
  }

  async #checkShared(late: boolean, session: string | null, ip: string, user: string | null): Promise<HttpError | null> {
    const limiters = this.#limiters ?? (await (this.#making ??= this.#make!().then((made) => (this.#limiters = made))));
    const indexes = late ? this.#lateIndexes : this.#earlyIndexes;
    let retryAfterMs = 0;
    if (indexes.length === 1) {
      // The common case, without the list below.
      const index = indexes[0]!;
      retryAfterMs = await consume(limiters[index]!, this.#keyOf(index, session, ip, user));
    } else {
      const waits = await Promise.all(indexes.map((index) => consume(limiters[index]!, this.#keyOf(index, session, ip, user))));
      for (const wait of waits) retryAfterMs = Math.max(retryAfterMs, wait);
      if (retryAfterMs > 0) waits.forEach((wait, at) => wait === 0 && this.#giveBack(limiters, indexes[at]!, session, ip, user));
    }
    if (retryAfterMs === 0) return null;
    if (late) for (const index of this.#earlyIndexes) this.#giveBack(limiters, index, session, ip, user);
    return errorOf(this.#code, { retryAfterMs });
  }

  #giveBack(limiters: RateLimiterAbstract[], index: number, session: string | null, ip: string, user: string | null): void {
    // Not awaited: the refusal need not wait for Redis, and a point that cannot be given
    // back lapses with its window.
    limiters[index]!.reward(this.#keyOf(index, session, ip, user), 1).catch(() => {});
  }

  /** Whom a limit counts: prefixed by kind, so that no session id can ever equal an address. */
  #keyOf(index: number, session: string | null, ip: string, user: string | null): string {
    switch (this.#limits[index]!.key) {
      case "global":
        return "g";
      case "ip":
        return `a:${ip}`;
      case "session":
        return session === null ? `a:${ip}` : `s:${session}`;
      case "user":
        return user !== null ? `u:${user}` : session !== null ? `s:${session}` : `a:${ip}`;
    }
  }
}

/** 0 when admitted, else how long until a call is admitted again (at least 1 ms). */
async function consume(limiter: RateLimiterAbstract, key: string): Promise<number> {
  try {
    await limiter.consume(key, 1);
    return 0;
  } catch (refusal) {
    const wait = (refusal as { msBeforeNext?: unknown }).msBeforeNext;
    // An Error is no refusal: a limiter that failed with no stand-in left (never expected).
    if (refusal instanceof Error || typeof wait !== "number") throw refusal;
    return Math.max(1, Math.ceil(wait));
  }
}

/** `ctx.user.sub` when a verifier supplied a string one, else null (the `user` key then counts the session or address). */
export function userSubOf(user: unknown): string | null {
  if (typeof user !== "object" || user === null) return null;
  const sub = (user as { sub?: unknown }).sub;
  return typeof sub === "string" && sub !== "" ? sub : null;
}

/** A configured limit as getStatus lists it: `counted` says where it really counts (deployment scope without Redis: per process). */
export interface RateLimitStatus {
  /** `kind/id/method`, or `proxy/<alias>`. */
  for: string;
  limits: Array<ResolvedRateLimit & { counted: "process" | "deployment" }>;
}

/** Every configured limit, of methods and of proxy aliases. */
export function describeRateLimits(
  methods: Iterable<{ key: string; policy: { rateLimit: readonly ResolvedRateLimit[] | undefined } }>,
  proxies: ReadonlyMap<string, { rateLimit?: RateLimit | readonly RateLimit[] | undefined }>,
  withRedis: boolean,
): RateLimitStatus[] {
  const out: RateLimitStatus[] = [];
  const add = (name: string, limits: readonly ResolvedRateLimit[] | undefined) => {
    if (!limits) return;
    out.push({ for: name, limits: limits.map((limit) => ({ ...limit, counted: limit.scope === "deployment" && withRedis ? "deployment" : "process" })) });
  };
  for (const entry of methods) add(entry.key, entry.policy.rateLimit);
  for (const [alias, proxy] of proxies) add(`proxy/${alias}`, resolveRateLimits(proxy.rateLimit));
  return out;
}
