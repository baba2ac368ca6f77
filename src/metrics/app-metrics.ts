/**
 * The server's Prometheus series, in a registry of its own (never prom-client's global
 * one, so that several servers in one process keep their counts apart), built when
 * /metrics is first scraped (or, in a cluster, first gathered by the master): prom-client
 * costs ~12 MB and the request path records without it (./call-recorder.ts, the runtime's
 * and the session store's plain cells), so nothing here runs per call.
 *
 *   app_rpc_calls_total{kind,id,method,code}       counter, code "OK" on success
 *   app_rpc_duration_seconds{kind,id,method}       histogram
 *   app_rpc_streams_started_total{kind,id,method}  counter, streams admitted (headers sent)
 *   app_rpc_streams_ended_total{kind,id,method,code}  counter, code "OK", an error code, or
 *                                                  RPC_CLIENT_CLOSED when the reader left
 *   app_rpc_stream_duration_seconds{kind,id,method}   histogram, arrival to terminal record
 *   app_rpc_stream_events_total / app_rpc_stream_bytes_total{kind,id,method}   counters
 *   app_rpc_active_calls{key} / app_rpc_queued_calls{key}   gauges, per concurrency key
 *   app_circuit_breaker_state{key,state}           gauge, 1 for the breaker's state
 *   app_circuit_breaker_failures{key}              gauge
 *   app_circuit_breaker_transitions_total{key,from,to}  counter
 *   app_session_store_duration_seconds{kind,operation}  histogram, loads and saves
 *   app_session_store_errors_total{kind,operation,code} counter
 *   app_session_store_skipped_total{kind,operation}     counter, refused by the open guard
 *   app_session_store_circuit_open{kind}           gauge, remote stores only
 *   app_isolation_threads / app_isolation_queued   gauges
 *   app_http_requests_in_flight                    gauge
 *   app_proxy_requests_total{alias,status}         counter
 *   app_proxy_duration_seconds{alias}              histogram, arrival to the end of the answer
 *   app_rate_limited_total{kind,id,method}         counter, calls a rate limit refused (a proxy
 *                                                  alias's: kind "proxy", id the alias, method "")
 *   plus prom-client's process and Node.js defaults.
 *
 * Counts and histograms are read from the cells at scrape time (./collected.ts), gauges
 * from `runtime.status()`. Summed over cluster workers (prom-client's default aggregation)
 * a breaker series counts the workers in that state. Every label value is bounded: method
 * labels by the registry (./call-recorder.ts), breaker keys by policies, store kinds and
 * operations by the code.
 */
import { Gauge, Registry, collectDefaultMetrics } from "prom-client";
import type { CountCell, CountSeries, HistogramSeries } from "../core/series.js";
import type { BreakerTransition } from "../runtime/circuit-breaker.js";
import { GuardedSessionStore } from "../state/guarded-session-store.js";
import type { SessionStoreMeter } from "../state/measured-session-store.js";
import type { SessionStore } from "../state/session-store.js";
import { METHOD_LABELS, type CallRecorder } from "./call-recorder.js";
import { collectedCounter, collectedHistogram } from "./collected.js";
import type { InFlightCounter } from "./in-flight.js";

const BREAKER_STATES = ["closed", "open", "trial"] as const;

export interface MetricsSources {
  /** What the RPC calls and proxied requests recorded. */
  calls: CallRecorder;
  runtimeStatus(): Record<string, unknown>;
  /** Streams the runtime admitted, by method. */
  streamsStarted(): Iterable<CountCell>;
  breakerTransitions(): BreakerTransition[];
  inFlight: InFlightCounter;
  /** The server's session store: a guarded one (Redis, the cluster's master) reports its guard. */
  sessionStore: SessionStore;
  /** What the session store's loads and saves recorded; null when the store is not measured. */
  sessionMeter: SessionStoreMeter | null;
}

export function createAppMetrics(sources: MetricsSources): Registry {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const registers = [registry];
  const counter = (name: string, help: string, series: CountSeries) => collectedCounter(registry, name, help, series.labelNames, () => series.cells());
  const histogram = (name: string, help: string, series: HistogramSeries) =>
    collectedHistogram(registry, name, help, series.labelNames, series.bounds, () => series.cells());
  const { calls } = sources;

  counter("app_rpc_calls_total", "RPC calls by target, method and answer code (OK on success, else the error code)", calls.calls);
  histogram("app_rpc_duration_seconds", "RPC call duration from arrival to answer", calls.durations);
  collectedCounter(registry, "app_rpc_streams_started_total", "Streaming answers admitted (headers sent), by method", METHOD_LABELS, sources.streamsStarted);
  counter("app_rpc_streams_ended_total", "Streaming answers ended, by method and code (OK, the error code, or RPC_CLIENT_CLOSED when the reader left)", calls.streamsEnded);
  histogram("app_rpc_stream_duration_seconds", "Streaming answer duration from arrival to the terminal record (buckets 0.1 s to 1 h)", calls.streamDurations);
  counter("app_rpc_stream_events_total", "Events written by streaming answers", calls.streamEvents);
  counter("app_rpc_stream_bytes_total", "Body bytes written by streaming answers (events, pings, terminal records)", calls.streamBytes);
  counter("app_proxy_requests_total", "Proxied requests by alias and the status answered to the client", calls.proxyRequests);
  histogram("app_proxy_duration_seconds", "Proxied request duration from arrival to the end of the answer, body included", calls.proxyDurations);
  counter("app_rate_limited_total", "Calls a rate limit refused (429 RPC_RATE_LIMITED), by method (a proxy alias: kind \"proxy\", id the alias, method \"\")", calls.rateLimited);

  const queue = (name: string, help: string, field: "active" | "queued") =>
    new Gauge({
      name,
      help,
      labelNames: ["key"] as const,
      registers,
      collect() {
        this.reset();
        for (const [key, entry] of entriesOf(sources.runtimeStatus().queues)) {
          const value = (entry as Record<string, unknown>)[field];
          if (typeof value === "number") this.set({ key }, value);
        }
      },
    });
  queue("app_rpc_active_calls", "Calls running per concurrency key", "active");
  queue("app_rpc_queued_calls", "Calls waiting for a slot per concurrency key", "queued");

  new Gauge({
    name: "app_circuit_breaker_state",
    help: "1 for the state (closed, open, trial) each circuit breaker is in; summed over workers, the workers in that state (with server.redis, each one's view of the shared breaker)",
    labelNames: ["key", "state"] as const,
    registers,
    collect() {
      this.reset();
      for (const [key, entry] of entriesOf(sources.runtimeStatus().breakers)) {
        const current = (entry as { state?: unknown }).state;
        for (const state of BREAKER_STATES) this.set({ key, state }, current === state ? 1 : 0);
      }
    },
  });
  new Gauge({
    name: "app_circuit_breaker_failures",
    help: "Failures counted by each circuit breaker",
    labelNames: ["key"] as const,
    registers,
    collect() {
      this.reset();
      for (const [key, entry] of entriesOf(sources.runtimeStatus().breakers)) {
        const failures = (entry as { failures?: unknown }).failures;
        if (typeof failures === "number") this.set({ key }, failures);
      }
    },
  });

  collectedCounter(
    registry,
    "app_circuit_breaker_transitions_total",
    "Circuit breaker state changes (closed, open, trial), counted as they happen, so a breaker that opened and closed between two scrapes still shows (with server.redis, this process's view of the shared breaker, changes another process caused included)",
    ["key", "from", "to"],
    () => sources.breakerTransitions().map(({ key, from, to, count }) => ({ labels: { key, from, to }, value: count })),
  );

  sessionStoreSeries(registry, sources);

  const isolation = (name: string, help: string, field: "threads" | "queued") =>
    new Gauge({
      name,
      help,
      registers,
      collect() {
        const pool = sources.runtimeStatus().isolation as Record<string, unknown> | null | undefined;
        const value = pool?.[field];
        this.set(typeof value === "number" ? value : 0);
      },
    });
  isolation("app_isolation_threads", "Worker threads of the isolation pool", "threads");
  isolation("app_isolation_queued", "Isolated calls waiting for a thread", "queued");

  new Gauge({
    name: "app_http_requests_in_flight",
    help: "HTTP requests being served",
    registers,
    collect() {
      this.set(sources.inFlight.snapshot().requests);
    },
  });

  return registry;
}

/** The session store's timings and errors, and the guard of a store in another process. */
function sessionStoreSeries(registry: Registry, sources: MetricsSources): void {
  const { sessionMeter: meter, sessionStore } = sources;
  if (meter) {
    const { durations, errors } = meter;
    collectedHistogram(
      registry,
      "app_session_store_duration_seconds",
      "Session data loads and saves that reached the store, failed ones included, by store kind (memory; cluster: a worker's store in its master; redis) and operation (load, save) (buckets 0.1 ms to 2.5 s)",
      durations.labelNames,
      durations.bounds,
      () => durations.cells(),
    );
    collectedCounter(
      registry,
      "app_session_store_errors_total",
      "Session data loads and saves that failed, by store kind, operation and error code (SESSION_STORE_UNAVAILABLE, SESSION_DATA_TOO_LARGE; _other for anything else)",
      errors.labelNames,
      () => errors.cells(),
    );
  }
  if (!(sessionStore instanceof GuardedSessionStore)) return;
  const kind = sessionStore.kind;
  collectedCounter(
    registry,
    "app_session_store_skipped_total",
    "Session data loads and saves refused at once, without asking the store, in the second after a load or save found it unreachable (cluster and redis stores only)",
    ["kind", "operation"],
    () => {
      const skipped = sessionStore.skipped;
      return [
        { labels: { kind, operation: "load" }, value: skipped.load },
        { labels: { kind, operation: "save" }, value: skipped.save },
      ];
    },
  );
  new Gauge({
    name: "app_session_store_circuit_open",
    help: "1 from the answer that found the session store unreachable until one reaches it again; summed over workers, the workers skipping it (cluster and redis stores only)",
    labelNames: ["kind"] as const,
    registers: [registry],
    collect() {
      this.set({ kind }, sessionStore.open ? 1 : 0);
    },
  });
}

function entriesOf(value: unknown): Array<[string, unknown]> {
  return value !== null && typeof value === "object" ? Object.entries(value) : [];
}
