/**
 * Circuit breakers shared through Redis (docs/guides/server-methods.md "Runtime protections"; docs/guides/deployment.md
 * "Shared state and Redis"): one hash per breaker key, `<prefix>breaker:<key>`, holding the
 * consecutive failures, when the breaker's open time ends, and the claim on its one trial.
 * Every change is one Lua script, so two processes recording at once cannot lose a count
 * or both win the trial; the times are Redis's own clock, since hosts' clocks differ.
 *
 * A script that changes what other processes should do (a breaker opens, closes, starts
 * counting, or its trial proved nothing) publishes the new state on `<prefix>breakers`, so
 * that they can admit and refuse calls from their own view, without asking Redis per call.
 * A view is read once before its first call and again whenever announcements may have been
 * missed (`generation`): the subscription dropped or came back, or Redis did.
 */
import { randomUUID } from "node:crypto";
import type { Redis } from "ioredis";
import type { Logger } from "../log/logger.js";
import type { RedisConnection } from "./redis-connection.js";
import type { SharedBreakerStore, SharedBreakerView, TrialClaim } from "./shared-state.js";

/** A breaker nobody touched for this long past its `resetAfterMs` is forgotten (closed, no failures). */
const IDLE_EXPIRY_MS = 24 * 3600 * 1000;

/**
 * Reads the breaker and Redis's clock; `view()` is the state other processes are told,
 * with the breaker's version: Redis's time in µs when it last changed (0 when it holds
 * nothing), formatted whole, since Lua would print it in exponent form and lose digits.
 */
const PRELUDE = `
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local nowMicros = string.format('%.0f', tonumber(time[1]) * 1000000 + tonumber(time[2]))
local fields = redis.call('HMGET', KEYS[1], 'failures', 'openUntil', 'trialUntil', 'trialToken', 'version')
local failures = tonumber(fields[1]) or 0
local openUntil = tonumber(fields[2]) or 0
local trialUntil = tonumber(fields[3]) or 0
local trialToken = fields[4] or ''
local version = fields[5] or '0'
local function view()
  if openUntil == 0 then return {'closed', failures, 0, version} end
  if now < openUntil then return {'open', failures, openUntil - now, version} end
  if trialUntil > now then return {'trial', failures, trialUntil - now, version} end
  return {'open', failures, 0, version}
end
`;

/**
 * ARGV: outcome, trial token ('' for none), failureThreshold, resetAfterMs, channel,
 * breaker key, origin. The rules are src/runtime/circuit-breaker.ts's: failures count
 * while closed and open the breaker at the threshold; a trial's success closes it and
 * clears the count, its failure reopens it; a success while closed clears the count; a
 * trial that proved nothing lets the next call claim the trial at once.
 */
const RECORD_SCRIPT = `${PRELUDE}
local outcome = ARGV[1]
local isTrial = ARGV[2] ~= '' and ARGV[2] == trialToken
local resetAfterMs = tonumber(ARGV[4])
local announce = false
local changed = true
if outcome == 'neutral' then
  if isTrial then
    openUntil = now
    trialUntil = 0
    redis.call('HSET', KEYS[1], 'openUntil', openUntil, 'trialUntil', 0, 'trialToken', '')
    announce = true
  else
    changed = false
  end
elseif outcome == 'success' then
  if isTrial or openUntil == 0 then
    announce = isTrial or failures > 0
    failures = 0
    openUntil = 0
    trialUntil = 0
    redis.call('DEL', KEYS[1])
  else
    changed = false
  end
elseif isTrial then
  openUntil = now + resetAfterMs
  trialUntil = 0
  redis.call('HSET', KEYS[1], 'openUntil', openUntil, 'trialUntil', 0, 'trialToken', '')
  announce = true
else
  failures = failures + 1
  redis.call('HSET', KEYS[1], 'failures', failures)
  if openUntil == 0 and failures >= tonumber(ARGV[3]) then
    openUntil = now + resetAfterMs
    redis.call('HSET', KEYS[1], 'openUntil', openUntil)
    announce = true
  elseif openUntil == 0 and failures == 1 then
    announce = true
  end
end
if changed then
  version = nowMicros
  if redis.call('EXISTS', KEYS[1]) == 1 then
    redis.call('HSET', KEYS[1], 'version', version)
    redis.call('PEXPIRE', KEYS[1], resetAfterMs + ${IDLE_EXPIRY_MS})
  end
end
local result = view()
if announce then redis.call('PUBLISH', ARGV[5], cjson.encode({ARGV[6], result[1], result[2], result[3], ARGV[7], result[4]})) end
return result
`;

/** ARGV: leaseMs, token. The trial goes to whoever claims it first once the open time has passed. */
const CLAIM_SCRIPT = `${PRELUDE}
local result = view()
if result[1] == 'open' and result[3] == 0 then
  redis.call('HSET', KEYS[1], 'trialUntil', now + tonumber(ARGV[1]), 'trialToken', ARGV[2], 'version', nowMicros)
  return {'granted', failures, tonumber(ARGV[1]), nowMicros}
end
return result
`;

const READ_SCRIPT = `${PRELUDE}
return view()
`;

type Reply = [state: string, failures: number, remainingMs: number, version: string];
type Script = (key: string, ...args: Array<string | number>) => Promise<Reply>;
interface BreakerScripts {
  counterpartBreakerRecord: Script;
  counterpartBreakerClaim: Script;
  counterpartBreakerRead: Script;
}

export class RedisBreakerStore implements SharedBreakerStore {
  readonly #connection: RedisConnection;
  readonly #scripts: BreakerScripts;
  readonly #log: Logger;
  readonly #channel: string;
  /** Tells this process's own announcements from others'. */
  readonly #origin = randomUUID();
  readonly #changeListeners: Array<(key: string, view: SharedBreakerView) => void> = [];
  readonly #reconnectListeners: Array<() => void> = [];
  #fellBack = false;
  #subscribed = false;
  #generation = 0;

  constructor(connection: RedisConnection, log: Logger) {
    this.#connection = connection;
    this.#log = log;
    // Channels are not keys: ioredis does not prefix them, so the prefix is put here.
    this.#channel = `${connection.keyPrefix}breakers`;
    const client: Redis = connection.client;
    client.defineCommand("counterpartBreakerRecord", { numberOfKeys: 1, lua: RECORD_SCRIPT });
    client.defineCommand("counterpartBreakerClaim", { numberOfKeys: 1, lua: CLAIM_SCRIPT });
    client.defineCommand("counterpartBreakerRead", { numberOfKeys: 1, lua: READ_SCRIPT, readOnly: true });
    this.#scripts = client as unknown as BreakerScripts;
    connection.onReconnect(() => {
      this.#fellBack = false;
      // Views changed on their own while the store was away: the store's state takes over.
      this.#reconnected();
    });
  }

  get ready(): boolean {
    return this.#connection.ready;
  }

  get generation(): number {
    return this.#generation;
  }

  async record(key: string, outcome: "success" | "failure" | "neutral", trialToken: string | null, failureThreshold: number, resetAfterMs: number): Promise<SharedBreakerView> {
    const reply = await this.#scripts.counterpartBreakerRecord(
      breakerKey(key),
      outcome,
      trialToken ?? "",
      failureThreshold,
      resetAfterMs,
      this.#channel,
      key,
      this.#origin,
    );
    return viewOf(reply);
  }

  async claimTrial(key: string, leaseMs: number): Promise<TrialClaim> {
    const token = randomUUID();
    const reply = await this.#scripts.counterpartBreakerClaim(breakerKey(key), Math.max(1, Math.ceil(leaseMs)), token);
    return reply[0] === "granted" ? { granted: true, token, version: Number(reply[3]) || 0 } : { granted: false, view: viewOf(reply) };
  }

  async read(key: string): Promise<SharedBreakerView> {
    return viewOf(await this.#scripts.counterpartBreakerRead(breakerKey(key)));
  }

  onChange(listener: (key: string, view: SharedBreakerView) => void): void {
    this.#changeListeners.push(listener);
    if (this.#subscribed) return;
    this.#subscribed = true;
    const subscriber = this.#connection.subscriber();
    subscriber.on("message", (channel: string, message: string) => {
      if (channel === this.#channel) this.#announced(message);
    });
    // Subscribed on each connection, and only once the subscription holds are the views
    // read again: a change made before it is in what they read, one made after arrives
    // as a message. A failure here is the outage the connection already reports.
    subscriber.on("ready", () => {
      subscriber.subscribe(this.#channel).then(
        () => this.#reconnected(),
        () => {},
      );
    });
    // From here until the next subscription, announcements are lost.
    subscriber.on("close", () => {
      this.#generation += 1;
    });
  }

  onReconnect(listener: () => void): void {
    this.#reconnectListeners.push(listener);
  }

  fellBack(error?: unknown): void {
    if (this.#fellBack) return;
    this.#fellBack = true;
    this.#log.warn(
      { redis: this.#connection.address, err: error instanceof Error ? { name: error.name, message: error.message } : undefined },
      "circuit breakers cannot reach Redis: each process counts failures on its own until it returns",
    );
  }

  #reconnected(): void {
    this.#generation += 1;
    for (const listener of this.#reconnectListeners) listener();
  }

  #announced(message: string): void {
    let parsed: unknown;
    try {
      parsed = JSON.parse(message);
    } catch {
      return;
    }
    if (!Array.isArray(parsed) || parsed.length !== 6 || parsed[4] === this.#origin || typeof parsed[0] !== "string") return;
    const view = viewOf([parsed[1], parsed[2], parsed[3], parsed[5]] as Reply);
    for (const listener of this.#changeListeners) listener(parsed[0], view);
  }
}

function breakerKey(key: string): string {
  return `breaker:${key}`;
}

function viewOf(reply: Reply): SharedBreakerView {
  const state = reply[0] === "open" || reply[0] === "trial" ? reply[0] : "closed";
  return { state, failures: Number(reply[1]) || 0, remainingMs: Math.max(0, Number(reply[2]) || 0), version: Number(reply[3]) || 0 };
}
