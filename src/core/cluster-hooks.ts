/**
 * What a cluster worker's server delegates to its master (`createServer({ cluster })`).
 * Dev logs, status and metrics are per process; in a cluster the master owns the one log
 * buffer (global ids) and gathers every worker's status and metrics, so whichever worker
 * answers a call, the viewer sees the whole cluster. Types only: the server side imports
 * this file, never the IPC code behind it.
 */
import type { LogBufferInfo, LogPage } from "../log/log-page.js";
import type { LogQuery } from "../log/log-query.js";
import type { Registry } from "prom-client";

export type { LogPage };

/** One process's share of getStatus. */
export interface ProcessStatus {
  pid: number;
  uptimeSec: number;
  startedAt: number;
  inFlight: { requests: number; rpc: number };
  memory: { rss: number; heapUsed: number };
  breakers?: unknown;
  queues?: unknown;
  isolation?: unknown;
  [field: string]: unknown;
}

export interface WorkerStatus extends Partial<ProcessStatus> {
  /** The `node:cluster` worker id (a replacement gets a new one). */
  workerId: number;
  pid: number;
  state: "starting" | "ready" | "stopping";
  /** Set when the worker did not answer in time. */
  error?: string;
}

export interface ClusterStatus {
  master: { pid: number; uptimeSec: number; workersWanted: number; restarts: number };
  workers: WorkerStatus[];
  /** The master's dev log buffer, the one getLogs reads. */
  logBuffer: LogBufferInfo;
}

/** `registry.getMetricsAsJSON()`: what `AggregatorRegistry.aggregate` merges. */
export type MetricsJson = Awaited<ReturnType<Registry["getMetricsAsJSON"]>>;

export interface ClusterHooks {
  /** Dev mode: where this worker's JSON log lines go instead of a local ring buffer. */
  readonly logSink: { write(line: string): void };
  /** getLogs, answered from the master's buffer: the master applies the query's filters. */
  readLogs(query: LogQuery): Promise<LogPage>;
  /** getStatus: every worker's status, gathered by the master. */
  clusterStatus(): Promise<ClusterStatus>;
  /** /metrics: the text exposition aggregated over every worker by the master. */
  clusterMetrics(): Promise<string>;
  /** What this worker answers when the master gathers status. */
  serveStatus(status: () => ProcessStatus): void;
  /** What this worker answers when the master gathers metrics. */
  serveMetrics(metrics: () => Promise<MetricsJson>): void;
}
