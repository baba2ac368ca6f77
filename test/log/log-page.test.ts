// docs/guides/server-methods.md "Dev mode": where a getLogs page ends and the next one starts, on a buffer of known
// lines (over HTTP, where every poll logs a line of its own: test/rpc/dev-routes.test.ts).
import { describe, expect, it } from "vitest";
import { readLogPage } from "../../src/log/log-page.js";
import { parseLogQuery } from "../../src/log/log-query.js";
import { LogRingBuffer } from "../../src/log/ring-buffer.js";

const LEVEL_NUMBERS = { debug: 20, info: 30, warn: 40, error: 50 } as const;

/** A buffer holding these lines, ids 1, 2, 3… in order. */
function bufferOf(lines: Array<[keyof typeof LEVEL_NUMBERS, string]>, maxEntries = 100): LogRingBuffer {
  const buffer = new LogRingBuffer(maxEntries);
  for (const [level, msg] of lines) buffer.write(JSON.stringify({ level: LEVEL_NUMBERS[level], time: Date.now(), msg }));
  return buffer;
}

const page = (buffer: LogRingBuffer | null, payload: Record<string, unknown>) => {
  const answer = readLogPage(buffer, parseLogQuery(payload));
  return { ids: answer.entries.map((entry) => entry.id), next: answer.nextAfterId, hasMore: answer.hasMore };
};

describe("a getLogs page", () => {
  const buffer = bufferOf([
    ["info", "a"],
    ["warn", "b"],
    ["info", "c"],
    ["warn", "d"],
    ["info", "e"],
    ["info", "f"],
  ]);

  it("without filters: the next page starts after the last entry returned", () => {
    expect(page(buffer, { afterId: 0, limit: 4 })).toEqual({ ids: [1, 2, 3, 4], next: 4, hasMore: true });
    expect(page(buffer, { afterId: 4, limit: 4 })).toEqual({ ids: [5, 6], next: 6, hasMore: false });
  });

  it("gives the afterId back when nothing follows it", () => {
    expect(page(buffer, { afterId: 6 })).toEqual({ ids: [], next: 6, hasMore: false });
  });

  it("with a filter: a full page with matches after it ends at its last entry", () => {
    expect(page(buffer, { afterId: 0, limit: 1, level: "warn" })).toEqual({ ids: [2], next: 2, hasMore: true });
  });

  it("with a filter: once no match follows, the next page starts past every entry skipped", () => {
    expect(page(buffer, { afterId: 2, limit: 1, level: "warn" })).toEqual({ ids: [4], next: 6, hasMore: false });
    expect(page(buffer, { afterId: 4, level: "warn" })).toEqual({ ids: [], next: 6, hasMore: false });
    expect(page(buffer, { afterId: 0, search: "nothing like this" })).toEqual({ ids: [], next: 6, hasMore: false });
  });

  it("starts again from 0 for an afterId past every id the buffer gave (a restarted server)", () => {
    expect(page(buffer, { afterId: 7 })).toEqual({ ids: [], next: 0, hasMore: true });
    expect(page(bufferOf([]), { afterId: 7 })).toEqual({ ids: [], next: 0, hasMore: false });
  });

  it("starts at the oldest entry kept when older ones were dropped", () => {
    const small = bufferOf(
      [
        ["info", "a"],
        ["info", "b"],
        ["info", "c"],
      ],
      2,
    );
    expect(page(small, { afterId: 0 })).toEqual({ ids: [2, 3], next: 3, hasMore: false });
  });

  it("is empty, keeping afterId, where the process keeps no dev log", () => {
    expect(readLogPage(null, parseLogQuery({ afterId: 3 }))).toEqual({
      entries: [],
      nextAfterId: 3,
      lastId: 3,
      hasMore: false,
      totalBuffered: 0,
      maxEntries: 0,
    });
  });
});
