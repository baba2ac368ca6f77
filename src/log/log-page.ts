/**
 * One `getLogs` page read from the dev log buffer (docs/guides/server-methods.md "Dev mode"): the oldest entries
 * after `afterId` that pass the query's filters, and where the next page starts. The same
 * function serves a single process and, in a cluster, the master's one buffer.
 *
 * Paging must neither lose an entry nor spin in place: `nextAfterId` is the id of the
 * last entry returned when more matches wait, and otherwise the id of the last entry looked
 * at, so entries the filters skipped are not scanned again, and a page that found nothing
 * still moves on past them.
 */
import type { LogQuery } from "./log-query.js";
import type { LogEntry, LogRingBuffer } from "./ring-buffer.js";

export interface LogBufferInfo {
  /** False when this process keeps no dev log (outside dev mode). */
  available: boolean;
  totalBuffered: number;
  maxEntries: number;
}

export interface LogPage {
  entries: LogEntry[];
  /** The next page's `afterId`. */
  nextAfterId: number;
  /** `nextAfterId` under the name earlier clients page with. */
  lastId: number;
  /** Whether entries that pass the filters wait after this page. */
  hasMore: boolean;
  totalBuffered: number;
  maxEntries: number;
}

export function describeLogBuffer(buffer: LogRingBuffer | null): LogBufferInfo {
  return { available: buffer !== null, totalBuffered: buffer?.size ?? 0, maxEntries: buffer?.maxEntries ?? 0 };
}

export function readLogPage(buffer: LogRingBuffer | null, query: LogQuery): LogPage {
  const { totalBuffered, maxEntries } = describeLogBuffer(buffer);
  const page = (entries: LogEntry[], nextAfterId: number, hasMore: boolean): LogPage => ({
    entries,
    nextAfterId,
    lastId: nextAfterId,
    hasMore,
    totalBuffered,
    maxEntries,
  });
  if (!buffer) return page([], query.afterId, false);
  // An id past every one this buffer ever gave comes from an earlier run of the server (ids
  // start at 1 again after a restart): page again from the start, or the viewer would see
  // nothing until the new ids passed the old one.
  if (query.afterId > buffer.lastId) return page([], 0, buffer.size > 0);

  const matches = entryFilter(query);
  const entries: LogEntry[] = [];
  let lastSeen = query.afterId;
  for (const entry of buffer.after(query.afterId)) {
    if (entries.length === query.limit) {
      // One more match is all `hasMore` needs; the next page scans from the last entry returned.
      if (matches(entry)) return page(entries, entries[entries.length - 1]!.id, true);
    } else if (matches(entry)) {
      entries.push(entry);
    }
    lastSeen = entry.id;
  }
  return page(entries, lastSeen, false);
}

function entryFilter({ levels, search }: LogQuery): (entry: LogEntry) => boolean {
  if (levels === null && search === null) return () => true;
  const wanted = levels === null ? null : new Set(levels);
  return (entry) => (wanted === null || wanted.has(entry.level)) && (search === null || searchTextOf(entry).includes(search));
}

/** Fields a search does not look at: the entry's sequence number, its time and its level. */
const NOT_SEARCHED = new Set(["id", "time", "timestamp", "level", "msg", "message"]);
const searchTexts = new WeakMap<LogEntry, string>();

/**
 * What a search looks in: the message, then every other field as JSON (the context the line
 * was logged with, and its source: `kind`, `itemId`, `method`, `event`, `pid`…), lower-cased.
 * Worked out once per entry, as a viewer polls with the same search again and again.
 */
function searchTextOf(entry: LogEntry): string {
  let text = searchTexts.get(entry);
  if (text === undefined) {
    const context = Object.fromEntries(Object.entries(entry).filter(([name]) => !NOT_SEARCHED.has(name)));
    text = `${entry.msg}\n${JSON.stringify(context)}`.toLowerCase();
    searchTexts.set(entry, text);
  }
  return text;
}
