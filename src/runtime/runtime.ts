/**
 * The runtime steps of the request path, in order:
 *   breaker → queue → (a streaming answer's headers) → executor (inline or isolated)
 *     → session data saved, all under the call's lifetime.
 * With `server.redis` the breaker is shared by the deployment's processes, and a method of
 * `concurrencyScope: "deployment"` takes a deployment-wide slot after this process's own
 * (docs/guides/server-methods.md "Runtime protections").
 * `run` is the one entry the gateway calls. It starts the call's timeout over (the gateway
 * armed it for the checks, body and verifiers), so the queue wait and the method share one
 * whole `timeoutMs`; the timer and the concurrency slot last until the method's work (and
 * its session's save) really ends, even when the caller was already answered.
 */
import type { MethodEntry } from "../discovery/registry.js";
import { HttpError, isHttpError } from "../errors/http-error.js";
import type { IsolationSettings } from "../config/schema.js";
import { CircuitBreakers, type BreakerRegistry, type BreakerTransition, type CallOutcome } from "./circuit-breaker.js";
import { SharedCircuitBreakers } from "./shared-circuit-breaker.js";
import { ConcurrencyLimiters, type ConcurrencyLimiter } from "./concurrency.js";
import { CallTimeoutError, ClientGoneError } from "./call-lifetime.js";
import { runInlineSync, SyncResult } from "./executor.js";
import { packIsolatedArgs } from "./isolated-args.js";
import { inlineContext, type Invocation } from "./invocation.js";
import type { IsolationPool } from "./isolation-pool.js";
import { SerializedResult, toSerialized } from "./serialized-result.js";
import { checkResult } from "../validation/check.js";
import type { StandardSchemaV1 } from "../validation/standard-schema.js";
import { FileResult } from "../plugin-api/file-result.js";
import { CountSeries, type CountCell } from "../core/series.js";
import type { CallSession } from "../state/call-session.js";
import type { DeploymentSlot, SharedState } from "../state/shared-state.js";

/** What the runtime needs from the server it runs for. */
export interface RuntimeOptions {
  dev: boolean;
  /** Check results against their policy's `output`: dev mode, the testing kit, `server.rpc.validateOutput`. */
  validateOutput: boolean;
  isolation: IsolationSettings;
  outbound: { allow: readonly string[]; timeoutMs: number };
  /** `kind/id` → folder of every plugin and module (isolated methods import server files by it). */
  itemDirs: ReadonlyMap<string, string>;
  /**
   * State shared with the deployment's other processes (`server.redis`): breakers shared
   * by all of them, and slots for `concurrencyScope: "deployment"`. Without it both stay
   * per process.
   */
  shared?: SharedState | null;
}

/** The work of a synchronous method: already over. */
const DONE: Promise<unknown> = Promise.resolve();

export class RpcRuntime {
  readonly #options: RuntimeOptions;
  readonly #breakers: BreakerRegistry;
  readonly #limiters = new ConcurrencyLimiters();
  /** Streams admitted, by method: the gateway sees only how each one ended. */
  readonly #streamsStarted = new CountSeries(["kind", "id", "method"]);
  #pool: Promise<IsolationPool> | null = null;
  #poolStatus: IsolationPool | null = null;

  constructor(options: RuntimeOptions) {
    this.#options = options;
    this.#breakers = options.shared ? new SharedCircuitBreakers(options.shared.breakers) : new CircuitBreakers();
  }

  /** Starts the worker pool now when some method needs it, so the first call finds it warm. */
  async warmUp(entries: Iterable<MethodEntry>): Promise<void> {
    for (const entry of entries) {
      if (entry.policy.isolation === "worker") {
        await this.#isolationPool();
        return;
      }
    }
  }

  /**
   * The method's result, or the refusal of a breaker that is open or a queue that is full:
   * returned, not thrown, because a throw unwound through the gateway's handler was the
   * largest single cost of such a refusal in a CPU profile (docs/reference/benchmarks.md
   * "Refusals").
   */
  async run(invocation: Invocation): Promise<SerializedResult | FileResult | HttpError> {
    const { entry, call, lifetime } = invocation;
    const { policy } = entry;
    const breaker = policy.circuitBreaker
      ? this.#breakers.for(policy.circuitBreaker.key, policy.circuitBreaker.failureThreshold, policy.circuitBreaker.resetAfterMs, policy.timeoutMs)
      : null;
    // Arguments an isolated method cannot receive are the caller's fault: refused here,
    // before the breaker, the queue or a worker sees the call.
    const isolatedArgs = isIsolated(entry) ? packIsolatedArgs(invocation.args, invocation.files?.placements()) : null;
    // A shared breaker answers at once unless it has a trial to claim from its store.
    let admitted = breaker ? breaker.admit() : false;
    if (admitted instanceof Promise) admitted = await admitted;
    if (admitted instanceof HttpError) return admitted;
    const isTrial = admitted;
    // The queue wait and the method share one whole `timeoutMs`, whatever the body took.
    lifetime.startTimeout(policy.timeoutMs);
    let work: Promise<unknown> | undefined;
    // The work and, when the method changed its session's data, the save after it: the
    // timer and the slots last until both are over.
    let finishing: Promise<unknown> | undefined;
    let limiter: ConcurrencyLimiter | undefined;
    let deploymentSlot: DeploymentSlot | undefined;
    const { session } = invocation;
    try {
      if (policy.maxConcurrency !== undefined) {
        const candidate = this.#limiters.for(policy.concurrencyKey, policy.maxConcurrency, policy.queueLimit);
        const slot = candidate.acquire(lifetime, policy.maxConcurrency, policy.queueLimit);
        if (slot instanceof HttpError) {
          breaker?.record(outcomeOf(slot), isTrial);
          return slot;
        }
        if (slot !== true) {
          call.queued = true;
          await slot;
        }
        limiter = candidate;
        const { shared } = this.#options;
        if (policy.concurrencyScope === "deployment" && shared) {
          // Behind this process's own slot and queue: only calls holding one wait on the
          // deployment's, and the call's timeout bounds that wait too.
          call.queued = true;
          deploymentSlot = await shared.slots.acquire(policy.concurrencyKey, policy.maxConcurrency, policy.queueLimit, lifetime.signal);
        }
      }
      // A client that left, or a timeout that passed, during the checks or the queue wait:
      // do not start the work.
      lifetime.throwIfEnded();
      call.phase = "run";
      // Admitted: a streaming answer's headers go out now, before the method's first event.
      if (invocation.stream) {
        invocation.stream.open();
        this.#streamsStarted.cell([entry.kind, entry.id, entry.name]).value += 1;
      }
      const executed = this.#execute(invocation, isolatedArgs);
      let value: unknown;
      if (executed instanceof SyncResult) {
        // A synchronous method: it is over, nothing to race or wait for.
        value = executed.value;
        work = DONE;
      } else {
        work = executed;
        value = await lifetime.race(work);
      }
      // The session's data is saved before the answer, under the call's timeout and slot.
      // Most calls changed nothing: no promise then.
      const saving = session?.save();
      if (saving) await lifetime.race((finishing = saving));
      // Checked and serialised here, not in the answer, so that a bad result counts for the
      // breaker. A file answer is sent by the gateway as it is.
      let checked = policy.output && this.#options.validateOutput && !(value instanceof FileResult) ? checkOutput(policy.output, value, this.#options.dev) : value;
      if (checked instanceof Promise) checked = await lifetime.race(checked);
      const result = checked instanceof FileResult ? checked : toSerialized(checked);
      breaker?.record("success", isTrial);
      return result;
    } catch (error) {
      if (work && session && finishing === undefined) finishing = saveAfterFailure(work, session, lifetime.ended);
      if (finishing && !lifetime.ended) await lifetime.race(finishing).catch(() => {});
      breaker?.record(outcomeOf(error), isTrial);
      throw error;
    } finally {
      // The timer and the slot last as long as the work itself, not just the answer.
      const settle = () => {
        lifetime.dispose();
        deploymentSlot?.release();
        limiter?.release();
      };
      const last = finishing ?? work;
      if (last && last !== DONE) last.then(settle, settle);
      else settle();
    }
  }

  #execute(invocation: Invocation, isolatedArgs: Uint8Array | null): SyncResult | Promise<unknown> {
    if (isolatedArgs) return this.#isolationPool().then((pool) => pool.run(invocation, isolatedArgs));
    const { trace } = invocation.call;
    // Under an SDK, spans the method's own code makes (an instrumented fetch) are the call's
    // children, and follow its sampling decision.
    if (trace.hasSpan) return trace.run(() => runInlineSync(invocation.entry, inlineContext(invocation), invocation.args));
    return runInlineSync(invocation.entry, inlineContext(invocation), invocation.args);
  }

  /** The pool, started on first need; piscina itself is loaded only then (~8 MB). */
  #isolationPool(): Promise<IsolationPool> {
    this.#pool ??= import("./isolation-pool.js").then(({ IsolationPool }) => {
      this.#poolStatus = new IsolationPool(this.#options.isolation, {
        dev: this.#options.dev,
        outbound: this.#options.outbound,
        itemDirs: [...this.#options.itemDirs],
      });
      return this.#poolStatus;
    });
    return this.#pool;
  }

  /** Breaker states, queue lengths and the pool, for getStatus and metrics. */
  status(): Record<string, unknown> {
    return {
      breakers: this.#breakers.status(),
      sharedState: this.#options.shared ? { kind: this.#options.shared.kind, ready: this.#options.shared.ready } : null,
      queues: this.#limiters.status(),
      isolation: this.#poolStatus?.status() ?? null,
    };
  }

  /** Streams admitted so far, by method (for metrics). */
  streamsStarted(): Iterable<CountCell> {
    return this.#streamsStarted.cells();
  }

  /** Every breaker's moves between states so far (for metrics). */
  breakerTransitions(): BreakerTransition[] {
    return this.#breakers.transitions();
  }

  async close(): Promise<void> {
    const pool = this.#pool;
    this.#pool = null;
    this.#poolStatus = null;
    await (await pool)?.close();
  }
}

/**
 * What a call's end means for its breaker (docs/guides/server-methods.md "Runtime protections"): 5xx errors and
 * timeouts are failures; a 4xx RpcError is the method working as meant; a departed client
 * or a call refused by a full queue proves nothing.
 */
function outcomeOf(error: unknown): CallOutcome {
  if (error instanceof ClientGoneError) return "neutral";
  if (error instanceof CallTimeoutError) return "failure";
  if (isHttpError(error)) {
    // A full queue, or a session store that is down, says nothing about the method's upstream.
    if (error.code === "RPC_QUEUE_FULL" || error.code === "SESSION_STORE_UNAVAILABLE") return "neutral";
    return error.status >= 500 ? "failure" : "success";
  }
  return "failure";
}

/**
 * The save of a call that did not succeed. A method that threw still has what it changed
 * saved, and the viewer's next call reads it (the error answer waits for the save); a call
 * that timed out or whose viewer left has it saved once the method really ends. A save that
 * fails then changes nothing: the call's own error is the answer.
 */
function saveAfterFailure(work: Promise<unknown>, session: CallSession, callEnded: boolean): Promise<unknown> {
  const save = () => {
    try {
      return session.save();
    } catch {
      // A field JSON cannot carry: nothing to save.
      return undefined;
    }
  };
  const saving = callEnded ? work.then(save, save) : Promise.resolve(save());
  return saving.catch(() => {});
}

/** An isolated method's result arrives as JSON text: its `output` checks the value the viewer would get. */
function checkOutput(schema: StandardSchemaV1, value: unknown, dev: boolean): unknown {
  return checkResult(schema, value instanceof SerializedResult ? JSON.parse(value.json) : value, dev);
}

function isIsolated(entry: MethodEntry): boolean {
  return entry.policy.isolation === "worker" && Boolean(entry.file);
}
