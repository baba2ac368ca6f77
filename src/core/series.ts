/**
 * Counters and histograms kept as plain numbers, for what the request path measures
 * (docs/reference/http-routes.md, GET /metrics). prom-client's own `inc` and `observe` hash their
 * label object on every call: 1.3–2.5 µs for one counter and one histogram, up to a tenth
 * of an RPC echo. Here a cell is found through one Map per label and then costs a few
 * additions, about 60 ns for the same two. src/metrics/ turns the cells into prom-client
 * series only when /metrics is scraped.
 * Dependency-free, so that every part below metrics/ (the session stores, the runtime)
 * may record into them without loading prom-client.
 *
 * The label values are the caller's to bound: each distinct set makes a cell for good.
 */

/** One counter series: a label set and its count. */
export class CountCell {
  readonly labels: Readonly<Record<string, string>>;
  value = 0;

  constructor(labels: Readonly<Record<string, string>>) {
    this.labels = labels;
  }
}

/** One histogram series: per-bucket counts (not cumulative; the last bucket is +Inf), sum and count. */
export class HistogramCell {
  readonly labels: Readonly<Record<string, string>>;
  readonly buckets: Float64Array;
  sum = 0;
  count = 0;
  readonly #bounds: readonly number[];

  constructor(labels: Readonly<Record<string, string>>, bounds: readonly number[]) {
    this.labels = labels;
    this.#bounds = bounds;
    this.buckets = new Float64Array(bounds.length + 1);
  }

  observe(value: number): void {
    const bounds = this.#bounds;
    let at = 0;
    while (at < bounds.length && value > bounds[at]!) at += 1;
    this.buckets[at]! += 1;
    this.sum += value;
    this.count += 1;
  }
}

/**
 * Cells by label values, each made on first use. One Map per label rather than one keyed
 * by the values joined: the values are strings the caller already looked up by (their hash
 * is cached), while a joined key is a new string to hash on every call.
 */
class Cells<Cell> {
  readonly labelNames: readonly string[];
  readonly #root = new Map<string, unknown>();
  readonly #all: Cell[] = [];
  readonly #make: (labels: Record<string, string>) => Cell;

  constructor(labelNames: readonly string[], make: (labels: Record<string, string>) => Cell) {
    if (labelNames.length === 0) throw new TypeError("a series needs at least one label");
    this.labelNames = labelNames;
    this.#make = make;
  }

  /** The cell of these label values, in the order of `labelNames`. */
  cell(values: readonly string[]): Cell {
    const last = this.labelNames.length - 1;
    let level = this.#root;
    for (let at = 0; at < last; at++) {
      const value = values[at] ?? "";
      let next = level.get(value) as Map<string, unknown> | undefined;
      if (next === undefined) level.set(value, (next = new Map()));
      level = next;
    }
    const value = values[last] ?? "";
    let cell = level.get(value) as Cell | undefined;
    if (cell === undefined) {
      const labels: Record<string, string> = {};
      this.labelNames.forEach((name, index) => (labels[name] = values[index] ?? ""));
      cell = this.#make(labels);
      level.set(value, cell);
      this.#all.push(cell);
    }
    return cell;
  }

  cells(): Iterable<Cell> {
    return this.#all;
  }
}

export class CountSeries extends Cells<CountCell> {
  constructor(labelNames: readonly string[]) {
    super(labelNames, (labels) => new CountCell(labels));
  }
}

export class HistogramSeries extends Cells<HistogramCell> {
  readonly bounds: readonly number[];

  /** `bounds`: the buckets' upper bounds, ascending (Prometheus's `le`). */
  constructor(labelNames: readonly string[], bounds: readonly number[]) {
    super(labelNames, (labels) => new HistogramCell(labels, bounds));
    this.bounds = bounds;
  }
}
