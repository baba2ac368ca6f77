/**
 * The server's Prometheus series, in a registry of its own (never prom-client's global
 * one, so that several servers in one process keep their counts apart):
 *
 *   app_rpc_calls_total{kind,id,method,code}       counter, code "OK" on success
 *   app_rpc_duration_seconds{kind,id,method}       histogram
 *   app_rpc_active_calls{key} / app_rpc_queued_calls{key}   gauges, per concurrency key
 *   app_circuit_breaker_state{key,state}           gauge, 1 for the breaker's state
 *   app_circuit_breaker_failures{key}              gauge
 *   app_isolation_threads / app_isolation_queued   gauges
 *   app_http_requests_in_flight                    gauge
 *   app_proxy_requests_total{alias,status}         counter
 *   app_proxy_duration_seconds{alias}              histogram, arrival to the end of the answer
 *   plus prom-client's process and Node.js defaults.
 *
 * Gauges are read from `runtime.status()` at scrape time. Summed over cluster workers
 * (prom-client's default aggregation) a breaker series counts the workers in that state.
 * Label values come from the URL only when they name a real method: anything else is
 * `_unknown`, so that requests for made-up names cannot grow the series without bound.
 */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from "prom-client";
import type { Registry as MethodRegistry } from "../discovery/registry.js";
import type { ProxyEventRecord, RpcEventRecord } from "../log/events.js";
import type { InFlightCounter } from "./in-flight.js";

const UNKNOWN = "_unknown";
const KINDS = new Set(["plugin", "module", "server"]);
const BREAKER_STATES = ["closed", "open", "trial"] as const;

export interface MetricsSources {
  methods: MethodRegistry;
  /** Configured proxy aliases: other names are counted as `_unknown`. */
  proxyAliases: ReadonlySet<string>;
  runtimeStatus(): Record<string, unknown>;
  inFlight: InFlightCounter;
}

export interface AppMetrics {
  registry: Registry;
  onRpcEvent(record: RpcEventRecord): void;
  onProxyEvent(record: ProxyEventRecord): void;
}

export function createAppMetrics(sources: MetricsSources): AppMetrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const registers = [registry];

  const calls = new Counter({
    name: "app_rpc_calls_total",
    help: "RPC calls by target, method and answer code (OK for success)",
    labelNames: ["kind", "id", "method", "code"] as const,
    registers,
  });
  const duration = new Histogram({
    name: "app_rpc_duration_seconds",
    help: "RPC call duration from arrival to answer",
    labelNames: ["kind", "id", "method"] as const,
    buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers,
  });

  const proxyRequests = new Counter({
    name: "app_proxy_requests_total",
    help: "Proxied requests by alias and answer status",
    labelNames: ["alias", "status"] as const,
    registers,
  });
  const proxyDuration = new Histogram({
    name: "app_proxy_duration_seconds",
    help: "Proxied request duration from arrival to the end of the answer",
    labelNames: ["alias"] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 120],
    registers,
  });

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
    help: "1 for the state each circuit breaker is in (summed over workers: workers in that state)",
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

  return {
    registry,
    onRpcEvent(record) {
      const known = sources.methods.target(record.kind, record.id)?.methods.has(record.method) === true;
      const labels = known
        ? { kind: record.kind, id: record.id, method: record.method }
        : { kind: KINDS.has(record.kind) ? record.kind : UNKNOWN, id: UNKNOWN, method: UNKNOWN };
      calls.inc({ ...labels, code: record.code ?? "OK" });
      duration.observe(labels, record.durationMs / 1000);
    },
    onProxyEvent(record) {
      const alias = record.alias !== null && sources.proxyAliases.has(record.alias) ? record.alias : UNKNOWN;
      proxyRequests.inc({ alias, status: String(record.status) });
      proxyDuration.observe({ alias }, record.durationMs / 1000);
    },
  };
}

function entriesOf(value: unknown): Array<[string, unknown]> {
  return value !== null && typeof value === "object" ? Object.entries(value) : [];
}
