/**
 * `isolation: "worker"`: a piscina pool of worker threads, reused across calls and kept
 * warm (`minThreads`), so an isolated call costs a message round trip, not a thread start.
 * On timeout the method's `ctx.signal` fires first; a method still running after a short
 * grace has its worker terminated (piscina does this when the task's signal fires) and
 * replaced. A worker that dies any other way answers RPC_WORKER_CRASHED and the pool
 * starts a new one.
 */
import { randomUUID } from "node:crypto";
import { rm } from "node:fs/promises";
import { availableParallelism, tmpdir } from "node:os";
import { join } from "node:path";
import { MessageChannel, receiveMessageOnPort } from "node:worker_threads";
import { Piscina } from "piscina";
import type { IsolationSettings } from "../config/schema.js";
import { RpcError, errorOf } from "../errors/http-error.js";
import type { IsolatedOutcome, IsolatedTask, IsolationWorkerData } from "./isolated-task.js";
import { isolatedContext, type Invocation } from "./invocation.js";
import { SerializedResult } from "./serialized-result.js";
import { relayEmits } from "./isolated-emit.js";
import { fileResultOf, streamedFileNotice, streamedFileResult } from "./isolated-file.js";
import { FileResult } from "../plugin-api/file-result.js";
import type { SessionFields } from "./isolated-task.js";
import { TEMP_PREFIX } from "./call-files.js";

/** docs/guides/server-methods.md "Runtime protections": long enough for an abort handler to run, short enough not to matter. */
const DEFAULT_ABORT_GRACE_MS = 250;

export class IsolationPool {
  readonly #pool: Piscina<IsolatedTask, IsolatedOutcome>;
  readonly #abortGraceMs: number;

  constructor(settings: IsolationSettings, data: IsolationWorkerData) {
    this.#abortGraceMs = settings.abortGraceMs ?? DEFAULT_ABORT_GRACE_MS;
    this.#pool = new Piscina({
      filename: new URL("./isolation-worker.js", import.meta.url).href,
      minThreads: settings.minThreads ?? 1,
      maxThreads: settings.maxThreads ?? Math.max(2, availableParallelism()),
      idleTimeout: settings.idleTimeoutMs ?? 60_000,
      resourceLimits: {
        ...(settings.maxOldGenerationSizeMb ? { maxOldGenerationSizeMb: settings.maxOldGenerationSizeMb } : {}),
        ...(settings.maxYoungGenerationSizeMb ? { maxYoungGenerationSizeMb: settings.maxYoungGenerationSizeMb } : {}),
        ...(settings.stackSizeMb ? { stackSizeMb: settings.stackSizeMb } : {}),
      },
      workerData: data,
    });
    // A worker that dies between tasks must not take the server down; piscina replaces it.
    this.#pool.on("error", () => {});
  }

  /**
   * Runs one call. The call's end (timeout or client gone) fires `ctx.signal` in the
   * worker; the timeout also terminates the worker, `abortGraceMs` later unless the method
   * settled by then, and also after a client left, so a stubborn method never keeps its
   * worker past its timeout and the grace. Terminating in the same instant as the signal
   * left the method's abort handler no time to run. The caller's 504 does not wait for
   * the grace: the runtime answers at the timeout.
   *
   * A call that ends while it still waits for a free worker leaves piscina's queue at once
   * (aborting a task that has not started only dequeues it): waiting for the grace would
   * let it start after its caller was answered. The worker says when it takes the task;
   * should the call end just before that notice arrives, the worker is terminated, and
   * should a worker take a call that has ended, it sees the abort first and does not run it.
   */
  async run(invocation: Invocation, args: Uint8Array): Promise<SerializedResult | FileResult> {
    const { entry, lifetime, files } = invocation;
    const { port1, port2 } = new MessageChannel();
    const terminate = new AbortController();
    let started = false;
    // A stream the method answered with is announced on this port before the body: the
    // call's answer starts then, while the task lasts until the body's end.
    let announce!: (file: FileResult) => void;
    const announced = new Promise<FileResult>((resolve) => (announce = resolve));
    const onMessage = (message: unknown) => {
      if (message === "started") {
        started = true;
        return;
      }
      const notice = streamedFileNotice(message);
      if (!notice) return;
      adoptFields(invocation, notice);
      announce(streamedFileResult(notice));
    };
    const notify = (reason: unknown) => {
      port1.postMessage(1);
      for (let pending = receiveMessageOnPort(port1); pending; pending = receiveMessageOnPort(port1)) onMessage(pending.message);
      if (!started) terminate.abort(reason);
    };
    let grace: NodeJS.Timeout | undefined;
    lifetime.onEnd(notify);
    // The lifetime runs its end listeners (the notice above) before its timeout listeners.
    lifetime.onTimeout((reason) => {
      grace = setTimeout(() => terminate.abort(reason), this.#abortGraceMs);
    });
    port1.on("message", onMessage);
    // A streaming call's events come back over a port of their own.
    const { stream } = invocation;
    const emits = stream ? new MessageChannel() : undefined;
    if (emits && stream) relayEmits(emits.port1, stream);
    const cleanup = () => {
      clearTimeout(grace);
      lifetime.offEnd(notify);
      port1.close();
      emits?.port1.close();
    };
    const ownDir = files?.hasDir ? await files.madeDir() : undefined;
    // A name only (nothing is made unless the method asks): removed below when the worker
    // ends without handing it back. A random UUID costs far less than the task's messages.
    const reservedTempDir = ownDir === undefined ? join(tmpdir(), TEMP_PREFIX + randomUUID()) : undefined;
    const removeReserved = () => {
      if (reservedTempDir !== undefined) void rm(reservedTempDir, { recursive: true, force: true, maxRetries: 3 }).catch(() => {});
    };
    const task = this.#pool.run(
      {
        file: entry.file!,
        version: entry.fileVersion,
        moduleVersions: entry.moduleVersions,
        method: entry.name,
        context: isolatedContext(invocation),
        args,
        errors: entry.policy.errors && [...entry.policy.errors],
        uploads: files?.hasFiles ? files.transfers() : undefined,
        tempDir: ownDir,
        reservedTempDir,
        abortPort: port2,
        emitPort: emits?.port2,
      },
      { transferList: emits ? [port2, emits.port2] : [port2], signal: terminate.signal },
    );
    let outcome: IsolatedOutcome | FileResult;
    try {
      outcome = await Promise.race([task, announced]);
    } catch (error) {
      cleanup();
      removeReserved();
      if (terminate.signal.aborted) throw terminate.signal.reason;
      throw Object.assign(errorOf("RPC_WORKER_CRASHED"), { cause: error });
    }
    if (!(outcome instanceof FileResult) && outcome.ok && "file" in outcome && outcome.file === null) {
      // A short stream's task may end before its notice was dispatched: the notice is queued.
      for (let pending = receiveMessageOnPort(port1); pending; pending = receiveMessageOnPort(port1)) onMessage(pending.message);
      outcome = await announced;
    }
    if (outcome instanceof FileResult) {
      // The worker reads the source until the body ends; a worker that dies meanwhile cuts
      // the body short (its port closes), which the answer logs.
      task.then(cleanup, () => {
        cleanup();
        removeReserved();
      });
      return outcome;
    }
    cleanup();
    adoptFields(invocation, outcome);
    if (outcome.ok) return "file" in outcome ? fileResultOf(outcome.file!) : new SerializedResult(outcome.json);
    if ("aborted" in outcome) throw lifetime.reason;
    if ("badResult" in outcome) throw Object.assign(errorOf("RPC_BAD_RESULT"), { cause: new Error(outcome.badResult) });
    const { error } = outcome;
    if (error.rpc) throw new RpcError(error.status, error.code, error.message, error.details);
    const thrown = new Error(error.message);
    thrown.stack = error.stack;
    throw thrown;
  }

  status(): { threads: number; queued: number; utilization: number } {
    return { threads: this.#pool.threads.length, queued: this.#pool.queueSize, utilization: this.#pool.utilization };
  }

  async close(): Promise<void> {
    await this.#pool.destroy();
  }
}

/** What the worker hands back beside the result: the session's fields to save, and a temporary folder it made. */
function adoptFields(invocation: Invocation, fields: SessionFields | { ok: false; aborted: true }): void {
  if ("session" in fields && fields.session) invocation.session?.adopt(new Map(fields.session));
  if ("tempDir" in fields && fields.tempDir !== undefined) invocation.files?.adopt(fields.tempDir);
}
