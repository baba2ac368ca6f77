/**
 * prom-client series read from plain cells (../core/series.ts) when /metrics is scraped,
 * so that the request path records without prom-client. Both are ordinary prom-client
 * metrics to a registry: the text exposition and `getMetricsAsJSON` (what a cluster's
 * master sums over its workers, with the default "sum" aggregator) see no difference.
 */
import { Counter, Histogram, type Registry } from "prom-client";
import type { HistogramCell } from "../core/series.js";

interface CountRead {
  readonly labels: Readonly<Record<string, string>>;
  readonly value: number;
}

/** A counter whose values are the cells' counts at scrape time. */
export function collectedCounter(registry: Registry, name: string, help: string, labelNames: readonly string[], read: () => Iterable<CountRead>): void {
  new Counter({
    name,
    help,
    labelNames,
    registers: [registry],
    collect() {
      this.reset();
      for (const { labels, value } of read()) this.inc(labels, value);
    },
  });
}

type HistogramValue = { labels: Record<string, string | number>; value: number; metricName: string };
/** prom-client's declared type asks for a `collect` its own histograms do not return either. */
type HistogramJson = Awaited<ReturnType<Histogram<string>["get"]>>;

/**
 * A histogram built from cells' bucket counts. prom-client's Histogram only learns values
 * through `observe`, one at a time, so this one answers its two read methods itself, in
 * the shape prom-client's own histogram gives: cumulative `_bucket` series by `le`, then
 * `+Inf`, `_sum` and `_count`.
 */
class CollectedHistogram extends Histogram<string> {
  readonly #name: string;
  readonly #help: string;
  readonly #bounds: readonly number[];
  readonly #read: () => Iterable<HistogramCell>;

  constructor(registry: Registry, name: string, help: string, labelNames: readonly string[], bounds: readonly number[], read: () => Iterable<HistogramCell>) {
    super({ name, help, labelNames, buckets: [...bounds], registers: [registry] });
    this.#name = name;
    this.#help = help;
    this.#bounds = bounds;
    this.#read = read;
  }

  override async get(): Promise<HistogramJson> {
    return this.#snapshot();
  }

  /** What the registry's text exposition reads in place of `get` (prom-client's Histogram has both). */
  async getForPromString(): Promise<HistogramJson> {
    return this.#snapshot();
  }

  #snapshot(): HistogramJson {
    const values: HistogramValue[] = [];
    const name = this.#name;
    const bucket = `${name}_bucket`;
    const bounds = this.#bounds;
    for (const cell of this.#read()) {
      let below = 0;
      for (let at = 0; at < bounds.length; at++) {
        below += cell.buckets[at]!;
        values.push({ labels: { ...cell.labels, le: bounds[at]! }, value: below, metricName: bucket });
      }
      values.push({ labels: { ...cell.labels, le: "+Inf" }, value: cell.count, metricName: bucket });
      values.push({ labels: { ...cell.labels }, value: cell.sum, metricName: `${name}_sum` });
      values.push({ labels: { ...cell.labels }, value: cell.count, metricName: `${name}_count` });
    }
    return { name, help: this.#help, type: "histogram", values, aggregator: "sum" } as unknown as HistogramJson;
  }
}

export function collectedHistogram(
  registry: Registry,
  name: string,
  help: string,
  labelNames: readonly string[],
  bounds: readonly number[],
  read: () => Iterable<HistogramCell>,
): void {
  new CollectedHistogram(registry, name, help, labelNames, bounds, read);
}
