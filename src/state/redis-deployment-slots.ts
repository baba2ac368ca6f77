/**
 * Deployment-wide concurrency slots (`runtime.concurrencyScope: "deployment"`, docs/guides/server-methods.md
 * "Runtime protections"): `maxConcurrency` counted across every process using one Redis,
 * with redis-semaphore's `Semaphore` on `<prefix>semaphore:slots:<concurrencyKey>`.
 *
 * Each slot is a lease of `leaseMs`, refreshed while the call holds it, so the slots of a
 * process that dies holding them lapse on their own within `leaseMs`. The lease's times
 * come from the holders' clocks: keep the hosts' clocks in sync (NTP), or a lease may
 * lapse early or late by their difference.
 *
 * A call that finds every slot taken waits only while fewer than its `queueLimit` calls of
 * the key wait for one in this process, as the per-process queue does (docs/guides/server-methods.md "Runtime
 * protections": with `queueLimit` calls waiting the next is refused): without this bound a
 * `queueLimit: 0` method would wait for the deployment after all.
 */
import { Semaphore } from "redis-semaphore";
import { errorOf, isHttpError } from "../errors/http-error.js";
import type { Logger } from "../log/logger.js";
import { storeUnavailable, type RedisConnection } from "./redis-connection.js";
import type { DeploymentSlot, DeploymentSlots } from "./shared-state.js";

/**
 * How often a waiting call asks for a slot again. Semaphores in Redis are polled; this
 * bounds both the extra wait after a slot frees and the commands per waiting call.
 */
const RETRY_INTERVAL_MS = 20;

/**
 * A semaphore whose refresh cannot throw into a timer: redis-semaphore refreshes from a
 * `setInterval`, and a refresh that fails because Redis is away would reject where nobody
 * catches it. Such a refresh counts as kept (the next one may succeed) and is logged once;
 * only Redis saying the lease is gone counts as lost.
 */
/** This process's calls of one key waiting for a deployment-wide slot. */
interface WaitLine {
  waiting: number;
}

class LeasedSemaphore extends Semaphore {
  readonly #onRefreshError: (error: unknown) => void;
  readonly #line: WaitLine;
  readonly #queueLimit: number;
  #refreshFailed = false;

  constructor(
    connection: RedisConnection,
    key: string,
    limit: number,
    leaseMs: number,
    queue: { line: WaitLine; queueLimit: number },
    onLost: () => void,
    onRefreshError: (error: unknown) => void,
  ) {
    super(connection.client, key, limit, {
      lockTimeout: leaseMs,
      // Refreshed three times per lease, so a late refresh or two still keeps it.
      refreshInterval: Math.max(1, Math.floor(leaseMs / 3)),
      // The call's own timeout bounds the wait, through the abort signal.
      acquireTimeout: 2_147_483_647,
      retryInterval: RETRY_INTERVAL_MS,
      onLockLost: onLost,
    });
    this.#onRefreshError = onRefreshError;
    this.#line = queue.line;
    this.#queueLimit = queue.queueLimit;
  }

  /** One attempt at once; only when it finds every slot taken does the call join the wait, if there is room. */
  protected override async _acquire(abortSignal?: AbortSignal): Promise<boolean> {
    const options = this._acquireOptions;
    this._acquireOptions = { ...options, acquireAttemptsLimit: 1, retryInterval: 0 };
    let acquired: boolean;
    try {
      acquired = await super._acquire(abortSignal);
    } finally {
      this._acquireOptions = options;
    }
    if (acquired) return true;
    if (this.#line.waiting >= this.#queueLimit) throw errorOf("RPC_QUEUE_FULL", { limit: this.#queueLimit });
    this.#line.waiting += 1;
    try {
      return await super._acquire(abortSignal);
    } finally {
      this.#line.waiting -= 1;
    }
  }

  protected override async _refresh(): Promise<boolean> {
    try {
      return await super._refresh();
    } catch (error) {
      // Once per slot: a Redis that stays away would otherwise log at every refresh.
      if (!this.#refreshFailed) this.#onRefreshError(error);
      this.#refreshFailed = true;
      return true;
    }
  }
}

export class RedisDeploymentSlots implements DeploymentSlots {
  readonly #connection: RedisConnection;
  readonly #log: Logger;
  readonly #leaseMs: number;
  readonly #lines = new Map<string, WaitLine>();

  constructor(connection: RedisConnection, leaseMs: number, log: Logger) {
    this.#connection = connection;
    this.#leaseMs = leaseMs;
    this.#log = log;
  }

  async acquire(key: string, limit: number, queueLimit: number, signal: AbortSignal): Promise<DeploymentSlot> {
    signal.throwIfAborted();
    // Refused at once while disconnected: the limit protects an upstream, and must not
    // quietly become a per-process one.
    if (!this.#connection.ready) throw storeUnavailable(new Error("not connected to Redis"));
    let line = this.#lines.get(key);
    if (!line) this.#lines.set(key, (line = { waiting: 0 }));
    const semaphore = new LeasedSemaphore(
      this.#connection,
      `slots:${key}`,
      limit,
      this.#leaseMs,
      { line, queueLimit },
      () => this.#log.warn({ concurrencyKey: key }, `lost the lease of a deployment-wide slot of ${key}: the call goes on, and for a while one more call may run than maxConcurrency allows`),
      (error) => this.#log.warn({ concurrencyKey: key, err: errorSummary(error) }, `could not refresh the lease of a deployment-wide slot of ${key}`),
    );
    try {
      await semaphore.acquire(signal);
    } catch (error) {
      semaphore.stopRefresh();
      if (signal.aborted) throw signal.reason;
      if (isHttpError(error) && error.code === "RPC_QUEUE_FULL") throw error;
      throw storeUnavailable(error);
    }
    const slot: DeploymentSlot = {
      release: () => {
        semaphore.release().catch((error: unknown) => {
          this.#log.warn({ concurrencyKey: key, err: errorSummary(error) }, `could not give back a deployment-wide slot of ${key}: it lapses with its lease`);
        });
      },
    };
    // Got the slot in the same moment the call ended: give it back at once.
    if (signal.aborted) {
      slot.release();
      throw signal.reason;
    }
    return slot;
  }
}

function errorSummary(error: unknown): { name: string; message: string } {
  return error instanceof Error ? { name: error.name, message: error.message } : { name: "Error", message: String(error) };
}
