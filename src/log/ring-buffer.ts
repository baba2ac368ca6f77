/**
 * The dev-mode log store behind `getLogs`: the newest `maxEntries` entries with ids that
 * only ever increase, so a viewer can page forward with `afterId = lastId`.
 */
export interface LogEntry {
  id: number;
  time: number;
  level: string;
  msg: string;
  [field: string]: unknown;
}

const LEVELS: Record<number, string> = { 10: "trace", 20: "debug", 30: "info", 40: "warn", 50: "error", 60: "fatal" };

export class LogRingBuffer {
  readonly #entries: LogEntry[] = [];
  readonly #maxEntries: number;
  #nextId = 1;

  constructor(maxEntries: number) {
    this.#maxEntries = Math.max(1, maxEntries);
  }

  /** pino destination: one JSON line per call. */
  write(line: string): void {
    let record: Record<string, unknown>;
    try {
      record = JSON.parse(line) as Record<string, unknown>;
    } catch {
      return;
    }
    const level = typeof record.level === "number" ? (LEVELS[record.level] ?? String(record.level)) : "info";
    // `id` is the entry's sequence number (paging relies on it); the logged event's own
    // `id` (the plugin or module id of rpc.* events and ctx.log lines) moves to `itemId`,
    // the name xOpat's log entries use, unless the event already has an `itemId` of its own.
    const { id: itemId, ...fields } = record;
    const entry: LogEntry = {
      ...fields,
      ...(itemId !== undefined && !("itemId" in fields) ? { itemId } : {}),
      id: this.#nextId++,
      // A method may log its own `time` field, which pino writes last: keep only a real date.
      time: typeof record.time === "number" && Number.isFinite(new Date(record.time).getTime()) ? record.time : Date.now(),
      level,
      msg: typeof record.msg === "string" ? record.msg : "",
    };
    this.#entries.push(entry);
    if (this.#entries.length > this.#maxEntries) this.#entries.splice(0, this.#entries.length - this.#maxEntries);
  }

  /** The oldest `limit` entries with an id above `afterId`, oldest first. */
  read(afterId: number, limit: number): { entries: LogEntry[]; lastId: number } {
    const start = this.#firstIndexAfter(afterId);
    const entries = this.#entries.slice(start, start + limit);
    return { entries, lastId: entries.length > 0 ? entries[entries.length - 1]!.id : afterId };
  }

  get lastId(): number {
    return this.#nextId - 1;
  }

  #firstIndexAfter(afterId: number): number {
    // Ids are contiguous within the buffer, so the position is arithmetic.
    const first = this.#entries[0];
    if (!first) return 0;
    return Math.min(this.#entries.length, Math.max(0, afterId - first.id + 1));
  }
}
