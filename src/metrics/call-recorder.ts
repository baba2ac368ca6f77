/**
 * What every RPC call and proxied request adds to the metrics, recorded from its one event
 * record into plain cells (../core/series.ts): about 60 ns a call, where prom-client's own
 * counter and histogram cost 1.3–2.5 µs. No prom-client here: this runs on the request path
 * from the start, and ./app-metrics.ts reads the cells when /metrics is first scraped.
 *
 * Label values come from the URL only when they name a real method (or a configured proxy
 * alias): anything else is `_unknown`, so that requests for made-up names cannot grow the
 * series without bound.
 */
import { CountSeries, HistogramSeries } from "../core/series.js";
import type { Registry as MethodRegistry } from "../discovery/registry.js";
import type { ProxyEventRecord, RpcEventRecord } from "../log/events.js";

const UNKNOWN = "_unknown";
const KINDS = new Set(["plugin", "module", "server"]);
export const METHOD_LABELS = ["kind", "id", "method"] as const;

export const RPC_BUCKETS = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];
/** Streams last from a second to the length of a conversation with a model. */
export const STREAM_BUCKETS = [0.1, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800, 3600];
export const PROXY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 120];

export class CallRecorder {
  readonly calls = new CountSeries([...METHOD_LABELS, "code"]);
  readonly durations = new HistogramSeries(METHOD_LABELS, RPC_BUCKETS);
  /** Streams by how they ended: code OK, the error code, or RPC_CLIENT_CLOSED when the reader left. */
  readonly streamsEnded = new CountSeries([...METHOD_LABELS, "code"]);
  readonly streamDurations = new HistogramSeries(METHOD_LABELS, STREAM_BUCKETS);
  readonly streamEvents = new CountSeries(METHOD_LABELS);
  readonly streamBytes = new CountSeries(METHOD_LABELS);
  readonly proxyRequests = new CountSeries(["alias", "status"]);
  readonly proxyDurations = new HistogramSeries(["alias"], PROXY_BUCKETS);
  /** Calls a rate limit refused, by method; a proxy alias's as kind `proxy`, id the alias, method "". */
  readonly rateLimited = new CountSeries(METHOD_LABELS);
  readonly #methods: MethodRegistry;
  readonly #proxyAliases: ReadonlySet<string>;

  /** `proxyAliases`: the configured ones; other names count as `_unknown`. */
  constructor(methods: MethodRegistry, proxyAliases: ReadonlySet<string>) {
    this.#methods = methods;
    this.#proxyAliases = proxyAliases;
  }

  readonly onRpcEvent = (record: RpcEventRecord): void => {
    const known = this.#methods.target(record.kind, record.id)?.methods.has(record.method) === true;
    const kind = known || KINDS.has(record.kind) ? record.kind : UNKNOWN;
    const id = known ? record.id : UNKNOWN;
    const method = known ? record.method : UNKNOWN;
    const code = record.code ?? "OK";
    const seconds = record.durationMs / 1000;
    const labels = [kind, id, method];
    this.calls.cell([kind, id, method, code]).value += 1;
    this.durations.cell(labels).observe(seconds);
    if (code === "RPC_RATE_LIMITED") this.rateLimited.cell(labels).value += 1;
    // Only a stream that opened has a size: a streaming call refused before it is a plain call.
    if (record.events === undefined) return;
    this.streamsEnded.cell([kind, id, method, code]).value += 1;
    this.streamDurations.cell(labels).observe(seconds);
    this.streamEvents.cell(labels).value += record.events;
    this.streamBytes.cell(labels).value += record.bytes ?? 0;
  };

  readonly onProxyEvent = (record: ProxyEventRecord): void => {
    const alias = record.alias !== null && this.#proxyAliases.has(record.alias) ? record.alias : UNKNOWN;
    this.proxyRequests.cell([alias, String(record.status)]).value += 1;
    this.proxyDurations.cell([alias]).observe(record.durationMs / 1000);
    if (record.code === "PROXY_RATE_LIMITED") this.rateLimited.cell(["proxy", alias, ""]).value += 1;
  };
}
