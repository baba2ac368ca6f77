/**
 * A worker's end of the IPC: tells the master it is ready (or why it could not start),
 * forwards its dev log lines, and implements `ClusterHooks` by asking the master, which
 * gathers from every worker. It also answers the master's own requests for this worker's
 * status and metrics.
 */
import type { ClusterHooks, ClusterStatus, LogPage, MetricsJson, ProcessStatus } from "../core/cluster-hooks.js";
import type { LogQuery } from "../log/log-query.js";
import { IpcChannel, isClusterMessage, type ClusterMessage } from "./ipc.js";
import { IpcSessionStore } from "./ipc-session-store.js";

/** How long a worker waits for the master: the master itself gives each worker less. */
export const MASTER_ANSWER_TIMEOUT_MS = 3_000;

export class WorkerLink implements ClusterHooks {
  readonly #channel = new IpcChannel((message) => this.#send(message));

  readonly logSink = {
    write: (line: string): void => {
      if (process.connected) this.#send({ type: "counterpart:log", line });
    },
  };

  constructor() {
    process.on("message", (message: unknown) => {
      if (isClusterMessage(message)) this.#channel.receive(message);
    });
    process.once("disconnect", () => this.#channel.close("the master is gone"));
  }

  /** Session data, held by the master. */
  readonly sessionStore = new IpcSessionStore(this.#channel);

  ready(url: string): void {
    this.#send({ type: "counterpart:ready", url });
  }

  /** Resolves once the message is handed to the master, so the worker can exit after it. */
  startupFailed(message: string): Promise<void> {
    return new Promise((resolve) => {
      if (!process.connected) return resolve();
      process.send!({ type: "counterpart:startup-failed", message } satisfies ClusterMessage, undefined, {}, () => resolve());
    });
  }

  readLogs(query: LogQuery): Promise<LogPage> {
    return this.#channel.request<LogPage>("logs", query, MASTER_ANSWER_TIMEOUT_MS);
  }

  clusterStatus(): Promise<ClusterStatus> {
    return this.#channel.request<ClusterStatus>("status", null, MASTER_ANSWER_TIMEOUT_MS);
  }

  clusterMetrics(): Promise<string> {
    return this.#channel.request<string>("metrics", null, MASTER_ANSWER_TIMEOUT_MS);
  }

  serveStatus(status: () => ProcessStatus): void {
    this.#channel.handle("local-status", () => status());
  }

  serveMetrics(metrics: () => Promise<MetricsJson>): void {
    this.#channel.handle("local-metrics", () => metrics());
  }

  #send(message: ClusterMessage): void {
    if (process.connected) process.send!(message);
  }
}
