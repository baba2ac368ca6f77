/**
 * The dev-mode log store behind `getLogs`: the newest `maxEntries` entries with ids that
 * only ever increase, so a viewer can page forward from the last id it saw. What a page
 * holds and how filters apply: log-query.ts.
 */
export interface LogEntry {
  id: number;
  time: number;
  /** `time` as an ISO string, and `msg` again: the names xOpat's log entries use. */
  timestamp: string;
  level: string;
  msg: string;
  message: string;
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
    // A method may log its own `time` field, which pino writes last: keep only a real date.
    const time = typeof record.time === "number" && Number.isFinite(new Date(record.time).getTime()) ? record.time : Date.now();
    const msg = typeof record.msg === "string" ? record.msg : "";
    const entry: LogEntry = {
      ...fields,
      ...(itemId !== undefined && !("itemId" in fields) ? { itemId } : {}),
      id: this.#nextId++,
      time,
      timestamp: new Date(time).toISOString(),
      level,
      msg,
      message: msg,
    };
    this.#entries.push(entry);
    if (this.#entries.length > this.#maxEntries) this.#entries.splice(0, this.#entries.length - this.#maxEntries);
  }

  /** The entries with an id above `afterId`, oldest first. */
  *after(afterId: number): Generator<LogEntry, void, undefined> {
    for (let index = this.#firstIndexAfter(afterId); index < this.#entries.length; index++) yield this.#entries[index]!;
  }

  /** The id of the newest entry ever written (0 before the first). */
  get lastId(): number {
    return this.#nextId - 1;
  }

  /** How many entries are held now. */
  get size(): number {
    return this.#entries.length;
  }

  get maxEntries(): number {
    return this.#maxEntries;
  }

  #firstIndexAfter(afterId: number): number {
    // Ids are contiguous within the buffer, so the position is arithmetic.
    const first = this.#entries[0];
    if (!first) return 0;
    return Math.min(this.#entries.length, Math.max(0, afterId - first.id + 1));
  }
}
