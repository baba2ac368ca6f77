/**
 * This process's connection to the Redis of `server.redis` (docs/reference/configuration.md;
 * docs/guides/deployment.md "Shared state and Redis"). Everything shared goes through it: session
 * data, circuit breakers, deployment-wide concurrency slots and rate limits.
 *
 * It fails fast rather than waits: while disconnected a command is refused at once (no
 * offline queue), one that gets no answer within `commandTimeoutMs` fails, and either maps
 * to 503 SESSION_STORE_UNAVAILABLE for the call that needed it. Meanwhile it reconnects by
 * itself, forever, with a capped backoff, so the server recovers when Redis returns
 * without a restart. A Redis that is down at start does not stop the server from starting.
 */
import { Redis, type RedisOptions } from "ioredis";
import { errorOf, type HttpError } from "../errors/http-error.js";
import type { RedisSettings } from "../config/resolve.js";
import type { Logger } from "../log/logger.js";
import { redisAddressOf } from "./redis-address.js";

/** The longest wait between two reconnection attempts. */
const MAX_RECONNECT_DELAY_MS = 2_000;

export class RedisConnection {
  /** The commands' connection; its keys are prefixed with `keyPrefix` by ioredis. */
  readonly client: Redis;
  /** `host:port`, for logs and status: the URL itself may carry a password. */
  readonly address: string;
  readonly keyPrefix: string;
  readonly commandTimeoutMs: number;
  readonly #settings: RedisSettings;
  readonly #log: Logger;
  #subscriber: Redis | null = null;
  readonly #reconnectListeners: Array<() => void> = [];
  #wasReady = false;
  /** True from a failure until the next `ready`: one warning per outage, not one per retry. */
  #down = false;
  #closed = false;

  constructor(settings: RedisSettings, log: Logger) {
    this.#settings = settings;
    this.#log = log;
    this.keyPrefix = settings.keyPrefix;
    this.commandTimeoutMs = settings.commandTimeoutMs;
    this.address = redisAddressOf(settings.url);
    this.client = this.#connect("commands");
    this.client.on("ready", () => {
      if (this.#down) this.#log.info({ redis: this.address }, `Redis at ${this.address} is reachable again: shared state is back`);
      else this.#log.info({ redis: this.address }, `connected to Redis at ${this.address}`);
      this.#down = false;
      if (this.#wasReady) for (const listener of this.#reconnectListeners) listener();
      this.#wasReady = true;
    });
    this.client.on("error", (error: Error) => this.#reportDown(error));
    this.client.on("close", () => {
      if (!this.#closed) this.#reportDown(new Error("connection closed"));
    });
  }

  /** True while commands can be sent; false while (re)connecting. */
  get ready(): boolean {
    return this.client.status === "ready";
  }

  /**
   * The pub/sub connection, made on first need: a subscribed connection runs no other
   * commands. It reconnects by itself, and its user subscribes on each `ready` (no
   * automatic resubscription: the user must know when the subscription is back). Its own
   * errors are this connection's outage, already reported.
   */
  subscriber(): Redis {
    if (!this.#subscriber) {
      // Unlike commands, a subscription may wait for the connection: nobody waits on it.
      this.#subscriber = this.#connect("subscriber", { enableOfflineQueue: true, maxRetriesPerRequest: null, autoResubscribe: false });
      this.#subscriber.on("error", () => {});
    }
    return this.#subscriber;
  }

  /**
   * Resolves true once connected, false after `timeoutMs` or at the first failed attempt
   * (a Redis that refuses connections now will not take them within a start-up's wait).
   */
  whenReady(timeoutMs: number): Promise<boolean> {
    if (this.ready) return Promise.resolve(true);
    return new Promise((resolve) => {
      const done = (ready: boolean) => {
        clearTimeout(timer);
        this.client.off("ready", onReady);
        this.client.off("error", onError);
        resolve(ready);
      };
      const onReady = () => done(true);
      const onError = () => done(false);
      const timer = setTimeout(() => done(false), timeoutMs);
      this.client.on("ready", onReady);
      this.client.on("error", onError);
    });
  }

  /** Runs `listener` each time the connection is ready again after an outage (not the first time). */
  onReconnect(listener: () => void): void {
    this.#reconnectListeners.push(listener);
  }

  /**
   * Closes both connections: politely (QUIT) when Redis answers, at once otherwise, and
   * stops reconnecting.
   */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await Promise.all(
      [this.client, this.#subscriber].map(async (connection) => {
        if (!connection) return;
        const ended = connection.status === "end" ? Promise.resolve() : new Promise<void>((resolve) => connection.once("end", () => resolve()));
        if (connection.status === "ready") await withTimeout(connection.quit(), this.commandTimeoutMs).catch(() => {});
        connection.disconnect();
        await withTimeout(ended, this.commandTimeoutMs).catch(() => {});
      }),
    );
  }

  #connect(role: "commands" | "subscriber", overrides: RedisOptions = {}): Redis {
    return new Redis(this.#settings.url, {
      keyPrefix: this.#settings.keyPrefix,
      connectionName: `counterpart-${role}-${process.pid}`,
      // Refuse at once while disconnected, and give a command that got no answer one
      // retry at most: the call waiting on it answers 503 instead of hanging.
      enableOfflineQueue: false,
      maxRetriesPerRequest: 1,
      commandTimeout: this.#settings.commandTimeoutMs,
      connectTimeout: Math.max(this.#settings.commandTimeoutMs, 1_000),
      // Forever, each wait a little longer, never more than MAX_RECONNECT_DELAY_MS.
      retryStrategy: (attempt) => Math.min(50 * attempt, MAX_RECONNECT_DELAY_MS),
      ...overrides,
    });
  }

  #reportDown(error: Error): void {
    if (this.#down || this.#closed) return;
    this.#down = true;
    this.#log.warn(
      { redis: this.address, err: cleanCause(error) },
      `Redis at ${this.address} is unreachable: calls that need shared state answer 503 SESSION_STORE_UNAVAILABLE until it returns (reconnecting)`,
    );
  }
}

/**
 * The answer to a call whose store could not be used (unreachable, too slow, or refusing),
 * with the cause kept for the log.
 */
export function storeUnavailable(error: unknown): HttpError {
  return Object.assign(errorOf("SESSION_STORE_UNAVAILABLE"), { cause: cleanCause(error) });
}

/**
 * The error's name and message only: ioredis attaches the failed command with its
 * arguments, which may be a session's data, and the cause goes to the log.
 */
function cleanCause(error: unknown): Error {
  const clean = new Error(error instanceof Error ? error.message : String(error));
  clean.name = error instanceof Error ? error.name : "Error";
  clean.stack = `${clean.name}: ${clean.message}`;
  return clean;
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error("timed out")), ms);
    promise.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (error: unknown) => {
        clearTimeout(timer);
        reject(error);
      },
    );
  });
}
