/**
 * `Retry-After` in Chromium (docs/guides/browser.md, "Retries and timeouts"): the three
 * HTTP-date forms of RFC 9110, always GMT whatever the browser's time zone, and values
 * that are neither digits nor an HTTP-date falling back to backoff.
 */
import { fileURLToPath } from "node:url";
import { build } from "esbuild";
import type { Browser, Page } from "playwright-core";
import { beforeAll, expect, it } from "vitest";
import { describeInBrowser, useBrowserFixture, type PageWindow } from "../helpers/browser.js";

const RETRY_HELPERS = fileURLToPath(new URL("../../src/client/retry.ts", import.meta.url));

/** 2025-01-01T00:00:00Z, the "now" of the table. */
const NOW = Date.UTC(2025, 0, 1);

interface Row {
  value: string;
  /** The wait in ms, or null for "not a valid value: back off instead". */
  wait: number | null;
  now?: number;
}

// The retry cases collected from ky's test suite, rows 11 to 25, as Counterpart reads them.
const TABLE: Row[] = [
  // 11: zero means at once.
  { value: "0", wait: 0 },
  // 12, 13: delay-seconds, never a timestamp, capped at 60 s.
  { value: "1704067200", wait: 60_000 },
  { value: "61", wait: 60_000 },
  { value: "60", wait: 60_000 },
  { value: "7", wait: 7_000 },
  // 14 to 17, 19: only digits are delay-seconds; nothing else falls back to Date parsing.
  { value: "0x10", wait: null },
  { value: "1e3", wait: null },
  { value: "", wait: null },
  { value: "not-a-valid-value", wait: null },
  { value: "-1", wait: null },
  { value: "1.5", wait: null },
  { value: "+5", wait: null },
  { value: "12/31/2024", wait: null },
  { value: "2025-01-01T00:00:30Z", wait: null },
  // 18: what Date.prototype.toString writes is not an HTTP-date.
  { value: "Sun Nov 06 1994 08:49:37 GMT", wait: null },
  { value: "Wed Jan 01 2025 00:00:30 GMT", wait: null },
  // IMF-fixdate, the usual form; a past date means at once.
  { value: "Wed, 01 Jan 2025 00:00:30 GMT", wait: 30_000 },
  { value: "Sun, 06 Nov 1994 08:49:37 GMT", wait: 0 },
  { value: "Wed, 01 Jan 2025 01:00:00 GMT", wait: 60_000 },
  // HTTP-date is case-sensitive, GMT only, with two-digit days.
  { value: "wed, 01 jan 2025 00:00:30 gmt", wait: null },
  { value: "Wed, 01 Jan 2025 00:00:30 UTC", wait: null },
  { value: "Wed, 1 Jan 2025 00:00:30 GMT", wait: null },
  // 20: RFC 850.
  { value: "Wednesday, 01-Jan-25 00:00:30 GMT", wait: 30_000 },
  { value: "Wed, 01-Jan-25 00:00:30 GMT", wait: null },
  // 21, 22: asctime, GMT although it does not say so; the day is space-padded or two digits.
  { value: "Wed Jan  1 00:00:30 2025", wait: 30_000 },
  { value: "Wed Jan 01 00:00:30 2025", wait: 30_000 },
  { value: "Wed Jan 1 00:00:30 2025", wait: null },
  { value: "Sun Nov  6 08:49:37 1994", wait: 0 },
  // 23: a leap second is the second after :59, in every form.
  { value: "Tue, 31 Dec 2024 23:59:60 GMT", wait: 10_000, now: NOW - 10_000 },
  { value: "Tuesday, 31-Dec-24 23:59:60 GMT", wait: 10_000, now: NOW - 10_000 },
  { value: "Tue Dec 31 23:59:60 2024", wait: 10_000, now: NOW - 10_000 },
  { value: "Wed, 01 Jan 2025 00:00:60 GMT", wait: 30_000, now: NOW + 30_000 },
  // 24: components out of range, or a day the month does not have.
  { value: "Sun, 32 Dec 2030 25:99:99 GMT", wait: null },
  { value: "Wed, 01 Jan 2025 24:00:00 GMT", wait: null },
  { value: "Wed, 01 Jan 2025 00:60:00 GMT", wait: null },
  { value: "Wed, 01 Jan 2025 00:00:61 GMT", wait: null },
  { value: "Wed, 31 Apr 2025 00:00:00 GMT", wait: null },
  { value: "Sat, 29 Feb 2025 00:00:00 GMT", wait: null },
  { value: "Sat, 00 Feb 2025 00:00:00 GMT", wait: null },
  { value: "Thu, 29 Feb 2024 00:00:30 GMT", wait: 30_000, now: Date.UTC(2024, 1, 29) },
  // 25: an RFC 850 year more than 50 years ahead is the past century's.
  { value: "Saturday, 01-Jan-50 00:00:00 GMT", wait: 60_000 },
  { value: "Monday, 31-Dec-74 23:59:59 GMT", wait: 60_000 },
  { value: "Tuesday, 01-Jan-75 00:00:00 GMT", wait: 60_000 },
  { value: "Tuesday, 01-Jan-75 00:00:01 GMT", wait: 0 },
  { value: "Wednesday, 01-Jan-76 00:00:00 GMT", wait: 0 },
  { value: "Sunday, 06-Nov-94 08:49:37 GMT", wait: 0 },
  // Near a century's end, a small year is the next century's (2105 from 2095).
  { value: "Thursday, 01-Jan-05 00:00:00 GMT", wait: 60_000, now: Date.UTC(2095, 0, 1) },
  { value: "Thursday, 01-Jan-05 00:00:30 GMT", wait: 30_000, now: Date.UTC(2105, 0, 1) },
];

/** `retryAfterDelay` and friends, bundled from the source as a classic script for a page. */
let helpers: string;

async function readTable(page: Page): Promise<{ value: string; wait: number | null }[]> {
  await page.addScriptTag({ content: helpers });
  return page.evaluate(
    ({ table, now }) => {
      const retry = (globalThis as unknown as { retryHelpers: { retryAfterDelay(v: string, now: number): number | undefined } }).retryHelpers;
      return table.map((row) => ({ value: row.value, wait: retry.retryAfterDelay(row.value, row.now ?? now) ?? null }));
    },
    { table: TABLE, now: NOW },
  );
}

/** An asctime HTTP-date (`Sun Nov  6 08:49:37 1994`), in GMT as the form requires. */
function asctime(ms: number): string {
  const d = new Date(ms);
  // toUTCString gives "Wed, 01 Jan 2025 00:00:30 GMT".
  const [dayName, , month] = d.toUTCString().split(" ") as [string, string, string];
  const time = d.toISOString().slice(11, 19);
  return `${dayName.slice(0, 3)} ${month} ${String(d.getUTCDate()).padStart(2, " ")} ${time} ${d.getUTCFullYear()}`;
}

describeInBrowser("Retry-After values", () => {
  const fx = useBrowserFixture();

  beforeAll(async () => {
    const bundled = await build({
      entryPoints: [RETRY_HELPERS],
      bundle: true,
      write: false,
      format: "iife",
      globalName: "retryHelpers",
      target: ["es2020"],
      logLevel: "silent",
    });
    helpers = bundled.outputFiles[0]!.text;
  });

  async function pageIn(timezoneId: string): Promise<Page> {
    const browser = fx.page.context().browser() as Browser;
    const context = await browser.newContext({ timezoneId });
    const page = await context.newPage();
    await page.goto(fx.server.origin + "/");
    return page;
  }

  it("reads every case of the table as expected", async () => {
    const expected = TABLE.map(({ value, wait }) => ({ value, wait }));
    expect(await readTable(fx.page)).toEqual(expected);
  });

  for (const timezoneId of ["Pacific/Kiritimati", "America/Los_Angeles"]) {
    it(`reads HTTP-dates as GMT in a browser set to ${timezoneId}`, async () => {
      const page = await pageIn(timezoneId);
      try {
        // The zone really applies: otherwise this test would prove nothing.
        expect(await page.evaluate(() => new Date(Date.UTC(2025, 0, 1)).getTimezoneOffset())).not.toBe(0);
        const expected = TABLE.map(({ value, wait }) => ({ value, wait }));
        expect(await readTable(page)).toEqual(expected);
      } finally {
        await page.context().close();
      }
    });
  }

  it("waits for an asctime Retry-After read as GMT, through the client in Pacific/Kiritimati", async () => {
    const page = await pageIn("Pacific/Kiritimati");
    try {
      // One-second resolution: the date lands between 3 and 4 s ahead, far enough that a
      // slow first request still leaves a wait to measure. Read as local time, it would be
      // 14 hours in the past: no wait at all.
      const retryAtMs = Math.ceil((Date.now() + 3_000) / 1000) * 1000;
      fx.server.script("/asctime", [{ status: 503, headers: { "Retry-After": asctime(retryAtMs) } }, { body: { ok: true } }]);
      const value = await page.evaluate(async () => new (globalThis as unknown as PageWindow).HttpClient().get("/asctime"));
      expect(value).toEqual({ ok: true });
      const hits = fx.server.hits("/asctime");
      expect(hits).toHaveLength(2);
      // The wait the date asks for, counted from the first answer (the browser shares this clock).
      const asked = retryAtMs - hits[0]!.time;
      expect(asked).toBeGreaterThan(1_000);
      expect(hits[1]!.time - hits[0]!.time).toBeGreaterThanOrEqual(asked - 100);
      expect(hits[1]!.time - hits[0]!.time).toBeLessThan(asked + 2_000);
    } finally {
      await page.context().close();
    }
  });

  it("asks for the asctime wait, not the 60 s cap, through the client in America/Los_Angeles", async () => {
    const page = await pageIn("America/Los_Angeles");
    try {
      fx.server.script("/asctime-west", [{ status: 429, headers: { "Retry-After": asctime(Date.now() + 30_000) } }, { body: { ok: true } }]);
      const waits = await page.evaluate(async () => {
        const w = globalThis as unknown as PageWindow;
        const waits: number[] = [];
        w.HttpClient.timing.sleep = (ms: number) => {
          waits.push(ms);
          return Promise.resolve();
        };
        await new w.HttpClient().get("/asctime-west");
        return waits;
      });
      expect(waits).toHaveLength(1);
      expect(waits[0]).toBeGreaterThan(27_000);
      expect(waits[0]).toBeLessThanOrEqual(30_000);
    } finally {
      await page.context().close();
    }
  });

  it("backs off, rather than retrying at once, after a Retry-After that is not a valid value", async () => {
    const junk = ["-1", "1.5", "12/31/2024", "Sun Nov 06 1994 08:49:37 GMT", "Sun, 32 Dec 2030 25:99:99 GMT"];
    junk.forEach((value, i) => fx.server.script(`/junk-${i}`, [{ status: 503, headers: { "Retry-After": value } }, { body: {} }]));
    const waits = await fx.page.evaluate(async (count) => {
      const w = globalThis as unknown as PageWindow;
      const waits: number[] = [];
      w.HttpClient.timing.random = () => 0.999999;
      w.HttpClient.timing.sleep = (ms: number) => {
        waits.push(ms);
        return Promise.resolve();
      };
      const c = new w.HttpClient();
      for (let i = 0; i < count; i += 1) await c.get(`/junk-${i}`);
      return waits;
    }, junk.length);
    // The first backoff step, 300 ms with this jitter source: not 0.
    expect(waits).toEqual(junk.map(() => 300));
  });
});
