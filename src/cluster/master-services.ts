/**
 * What the master answers its workers: dev logs from the one buffer it owns (every
 * worker's lines and its own, with ids that increase across the whole cluster), the
 * status of every worker, and the metrics of every worker aggregated with prom-client's
 * `AggregatorRegistry.aggregate` (counters and histograms summed, gauges summed).
 *
 * The master gathers from ready workers only, each bounded by a timeout: a worker still
 * starting, or one stuck in a busy loop, is listed as such rather than holding the answer.
 * (prom-client's `clusterMetrics()` asks every connected worker, a booting one included,
 * and fails the whole scrape after 5 s when one cannot answer yet; the same aggregation
 * over this channel avoids that.)
 */
import type { Worker } from "node:cluster";
import { AggregatorRegistry, Gauge, Registry } from "prom-client";
import type { LogRingBuffer } from "../log/ring-buffer.js";
import { describeLogBuffer, readLogPage } from "../log/log-page.js";
import type { LogQuery } from "../log/log-query.js";
import type { Logger } from "../log/logger.js";
import type { ClusterStatus, LogPage, MetricsJson, ProcessStatus, WorkerStatus } from "../core/cluster-hooks.js";
import type { IpcChannel } from "./ipc.js";
import { serveSessions } from "./ipc-session-store.js";
import type { SessionStore } from "../state/session-store.js";

export const WORKER_STATUS_TIMEOUT_MS = 1_000;
export const WORKER_METRICS_TIMEOUT_MS = 2_000;

export interface WorkerHandle {
  worker: Worker;
  channel: IpcChannel;
  state: WorkerStatus["state"];
  forkedAt: number;
}

export interface MasterFacts {
  startedAt: number;
  workersWanted: number;
  restarts(): number;
  handles(): WorkerHandle[];
}

export class MasterServices {
  readonly #facts: MasterFacts;
  readonly #ringBuffer: LogRingBuffer | null;
  readonly #log: Logger;
  #registry: Registry | null = null;
  /** Every worker's session data (docs/guides/sessions-and-state.md); null when the workers keep it in Redis. */
  readonly #sessions: SessionStore | null;

  constructor(facts: MasterFacts, ringBuffer: LogRingBuffer | null, log: Logger, sessions: SessionStore | null) {
    this.#facts = facts;
    this.#sessions = sessions;
    this.#ringBuffer = ringBuffer;
    this.#log = log;
  }

  /** The requests a worker may make of the master. */
  serve(channel: IpcChannel): void {
    // The worker checked the payload (parseLogQuery) before asking.
    channel.handle("logs", (query) => this.logs(query as LogQuery));
    channel.handle("status", () => this.status());
    channel.handle("metrics", () => this.metrics());
    if (this.#sessions) serveSessions(channel, this.#sessions);
  }

  /** A dev log line forwarded by a worker. */
  addLogLine(line: string): void {
    this.#ringBuffer?.write(line);
  }

  logs(query: LogQuery): LogPage {
    return readLogPage(this.#ringBuffer, query);
  }

  async status(): Promise<ClusterStatus> {
    const workers = await Promise.all(
      this.#facts.handles().map(async (handle): Promise<WorkerStatus> => {
        const base = { workerId: handle.worker.id, pid: handle.worker.process.pid ?? 0, state: handle.state };
        if (handle.state !== "ready") return base;
        try {
          const local = await handle.channel.request<ProcessStatus>("local-status", null, WORKER_STATUS_TIMEOUT_MS);
          return { ...local, ...base };
        } catch (error) {
          return { ...base, error: (error as Error).message };
        }
      }),
    );
    return {
      master: {
        pid: process.pid,
        uptimeSec: Math.round((Date.now() - this.#facts.startedAt) / 1000),
        workersWanted: this.#facts.workersWanted,
        restarts: this.#facts.restarts(),
      },
      workers: workers.sort((a, b) => a.workerId - b.workerId),
      logBuffer: describeLogBuffer(this.#ringBuffer),
    };
  }

  async metrics(): Promise<string> {
    const ready = this.#facts.handles().filter((handle) => handle.state === "ready");
    const answers = await Promise.allSettled(
      ready.map((handle) => handle.channel.request<MetricsJson>("local-metrics", null, WORKER_METRICS_TIMEOUT_MS)),
    );
    const parts: MetricsJson[] = [];
    answers.forEach((answer, index) => {
      if (answer.status === "fulfilled") parts.push(answer.value);
      else this.#log.warn({ workerPid: ready[index]!.worker.process.pid, err: answer.reason }, "metrics: a worker did not answer; left out of this scrape");
    });
    parts.push(await this.#masterRegistry().getMetricsAsJSON());
    return AggregatorRegistry.aggregate(parts).metrics();
  }

  /** The master's own series, made on the first scrape. */
  #masterRegistry(): Registry {
    this.#registry ??= createMasterRegistry(this.#facts);
    return this.#registry;
  }
}

/**
 * The master's own series: how many workers serve, and how often they were replaced
 * (exported for scripts/docs.mjs, which lists every series in docs/reference/metrics.md).
 */
export function createMasterRegistry(facts: Pick<MasterFacts, "handles" | "restarts">): Registry {
  const registry = new Registry();
  new Gauge({
    name: "app_cluster_workers",
    help: "Cluster workers by state (starting, ready, stopping); cluster only",
    labelNames: ["state"] as const,
    registers: [registry],
    collect() {
      this.reset();
      for (const state of ["starting", "ready", "stopping"] as const) {
        this.set({ state }, facts.handles().filter((handle) => handle.state === state).length);
      }
    },
  });
  new Gauge({
    name: "app_cluster_worker_restarts",
    help: "Workers replaced after a crash since the master started; cluster only",
    registers: [registry],
    collect() {
      this.set(facts.restarts());
    },
  });
  return registry;
}
