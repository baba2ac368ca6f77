// docs/guides/server-methods.md "Dev mode": dev-mode routes getStatus / getLogs (and the dev alias), absent
// outside dev mode, with the fields and filters xOpat's viewer uses. (What getLogs pages
// through: test/log/ring-buffer.test.ts.)
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { join } from "node:path";
import { startServer, useServer, type TestServer } from "../helpers/server.js";
import { openViewer, rpc } from "../helpers/http.js";

const ROOT = join(import.meta.dirname, "../fixtures/runtime-app");

describe("dev mode routes", () => {
  const app = useServer({ root: ROOT, dev: true, config: {} });

  it("getStatus reports the process, the registry with policies, breakers and queues", async () => {
    await rpc(app.url, "plugin/rt/limited", { viewer: app.viewer, body: { args: [1, "x"] } });
    const answer = await rpc(app.url, "server/core/getStatus", { viewer: app.viewer });
    expect(answer.status).toBe(200);
    const status = answer.body.result;
    expect(status).toMatchObject({ pid: expect.any(Number), dev: true, version: expect.any(String), uptimeSec: expect.any(Number) });
    expect(status.memory.rss).toBeGreaterThan(0);
    const rt = status.registry.find((target: { id: string }) => target.id === "rt");
    const limited = rt.methods.find((method: { name: string }) => method.name === "limited");
    expect(limited.policy).toMatchObject({ maxConcurrency: 2, queueLimit: 3, timeoutMs: 3000, public: false, requireSession: true });
    expect(status.queues["plugin/rt/limited"]).toEqual({ active: 0, queued: 0, maxConcurrency: 2, queueLimit: 3 });
    expect(status.breakers).toEqual(expect.any(Object));
  });

  it("needs a session and CSRF like any default method", async () => {
    const answer = await rpc(app.url, "server/core/getStatus");
    expect(answer.body.code).toBe("RPC_NO_SESSION");
  });

  it("refuses a bad getLogs payload with 400", async () => {
    const answer = await rpc(app.url, "server/core/getLogs", { viewer: app.viewer, body: { args: [{ afterId: "x" }] } });
    expect([answer.status, answer.body.code]).toEqual([400, "RPC_BAD_REQUEST"]);
    const limit = await rpc(app.url, "server/core/getLogs", { viewer: app.viewer, body: { args: [{ limit: -1 }] } });
    expect([limit.status, limit.body.code]).toEqual([400, "RPC_BAD_REQUEST"]);
  });

  it("getStatus has xOpat's fields beside its own, and no filesystem paths", async () => {
    const before = Date.now();
    const status = (await rpc(app.url, "server/core/getStatus", { viewer: app.viewer })).body.result;
    expect(status).toMatchObject({
      devMode: true,
      scope: "server/core/getStatus",
      platform: process.platform,
      arch: process.arch,
      uptimeMs: expect.any(Number),
      mode: "single",
      registrySummary: { pluginCount: 1, moduleCount: 1, plugins: ["rt"], modules: ["iso"] },
      logBuffer: { available: true, totalBuffered: expect.any(Number), maxEntries: 10_000 },
    });
    expect(status.logBuffer.totalBuffered).toBeGreaterThan(0);
    expect(new Date(status.startedAt).toISOString()).toBe(status.startedAt);
    expect(Date.parse(status.now)).toBeGreaterThanOrEqual(before - 1000);
    expect(Date.parse(status.now) - Date.parse(status.startedAt)).toBeGreaterThanOrEqual(status.uptimeMs - 1000);
    expect(Array.isArray(status.registry)).toBe(true); // the detailed list, as before
    expect(status).not.toHaveProperty("cacheDir");
    expect(status).not.toHaveProperty("root");
  });

  it("getStatus with includeRegistry: false gives the registry's counts only", async () => {
    const status = (await rpc(app.url, "server/core/getStatus", { viewer: app.viewer, body: { args: [{ includeRegistry: false }] } })).body.result;
    expect(status.registrySummary).toEqual({ pluginCount: 1, moduleCount: 1 });
    expect(status).not.toHaveProperty("registry");
    expect(status.queues).toEqual(expect.any(Object));
  });
});

describe("dev mode getLogs filters and paging", () => {
  const app = useServer({ root: ROOT, dev: true, config: {} });
  type Entry = { id: number; level: string; msg: string; message: string; time: number; timestamp: string; method?: string; event?: string };
  type Page = { entries: Entry[]; nextAfterId: number; lastId: number; hasMore: boolean; totalBuffered: number; maxEntries: number };

  async function logs(payload: Record<string, unknown>, path = "server/core/getLogs"): Promise<Page & { devMode: boolean; scope: string }> {
    const answer = await rpc(app.url, path, { viewer: app.viewer, body: { args: [payload] } });
    expect(answer.status).toBe(200);
    return answer.body.result;
  }

  /** Every page from `afterId` on, as a viewer polls: until hasMore is false. */
  async function allPages(payload: Record<string, unknown>): Promise<{ entries: Entry[]; last: Page; pages: number }> {
    const entries: Entry[] = [];
    let afterId = payload.afterId as number;
    for (let pages = 1; ; pages++) {
      const page = await logs({ ...payload, afterId });
      entries.push(...page.entries);
      expect(page.nextAfterId).toBe(page.lastId);
      if (page.hasMore) expect(page.nextAfterId).toBeGreaterThan(afterId); // paging always moves on
      afterId = page.nextAfterId;
      if (!page.hasMore) return { entries, last: page, pages };
      expect(pages).toBeLessThan(100);
    }
  }

  /** Lines at three levels, the warn ones naming a method nobody exports. */
  async function logMixedLines(marker: string): Promise<void> {
    for (let i = 0; i < 3; i++) {
      await rpc(app.url, "plugin/rt/stats", { body: {} }); // info: rpc.complete
      await rpc(app.url, `plugin/rt/${marker}${i}`, { viewer: app.viewer }); // warn: rpc.rejected, unknown method
    }
    await rpc(app.url, "plugin/rt/leak", { viewer: app.viewer }); // error: rpc.error (and an info line)
  }

  it("answers xOpat's fields: devMode, scope, timestamp and message beside time and msg, paging facts", async () => {
    await logMixedLines("fieldsProbe");
    for (const path of ["server/core/getLogs", "server/dev/getLogs"]) {
      const page = await logs({ afterId: 0, limit: 5 }, path);
      expect(page).toMatchObject({ devMode: true, scope: path, hasMore: true, maxEntries: 10_000 });
      expect(page.entries).toHaveLength(5);
      expect(page.nextAfterId).toBe(page.entries[4]!.id);
      expect(page.lastId).toBe(page.nextAfterId);
      expect(page.totalBuffered).toBeGreaterThan(5);
      for (const entry of page.entries) {
        expect(entry.timestamp).toBe(new Date(entry.time).toISOString());
        expect(entry.message).toBe(entry.msg);
      }
    }
  });

  it("takes 200 entries by default and clamps limit to 1..500", async () => {
    while ((await logs({ afterId: 0, limit: 500 })).entries.length < 500) {
      await Promise.all(Array.from({ length: 25 }, () => rpc(app.url, "plugin/rt/stats", { body: {} })));
    }
    expect((await logs({ afterId: 0 })).entries).toHaveLength(200);
    expect((await logs({ afterId: 0, limit: 0 })).entries).toHaveLength(1);
    expect((await logs({ afterId: 0, limit: 100_000 })).entries).toHaveLength(500);
  });

  it("filters by level: one name, a comma-separated list, an array; log means info, unknown names are ignored", async () => {
    const start = await newestId();
    await logMixedLines("levelProbe");
    const levelsOf = async (filter: Record<string, unknown>) =>
      new Set((await allPages({ afterId: start, limit: 500, ...filter })).entries.map((entry) => entry.level));
    expect(await levelsOf({ level: "warn" })).toEqual(new Set(["warn"]));
    expect(await levelsOf({ levels: "log, ERROR" })).toEqual(new Set(["info", "error"]));
    expect(await levelsOf({ levels: ["error", 7, null] })).toEqual(new Set(["error"]));
    expect(await levelsOf({ level: "warn", levels: ["error"] })).toEqual(new Set(["warn", "error"]));
    const everything = await levelsOf({});
    expect([...everything]).toEqual(expect.arrayContaining(["info", "warn", "error"]));
    expect(await levelsOf({ levels: ["nonsense"] })).toEqual(everything);
    expect(await levelsOf({ level: 42 })).toEqual(everything);
  });

  it("searches message and context without regard to case; a non-string search is ignored", async () => {
    const start = await newestId();
    await logMixedLines("SearchProbe");
    const bySearch = await allPages({ afterId: start, limit: 500, search: "searchprobe" });
    // The method names are in the entries' context, not their message (which is the event).
    expect(bySearch.entries.map((entry) => entry.method)).toEqual(["SearchProbe0", "SearchProbe1", "SearchProbe2"]);
    const byMessage = await allPages({ afterId: start, limit: 500, search: "RPC.ERROR" });
    expect(byMessage.entries.map((entry) => [entry.msg, entry.level])).toEqual([["rpc.error", "error"]]);
    const both = await allPages({ afterId: start, limit: 500, search: "searchprobe1", level: "warn" });
    expect(both.entries).toHaveLength(1);
    const ignored = await logs({ afterId: start, limit: 500, search: { text: "x" } });
    expect(ignored.entries.length).toBeGreaterThan(7);
  });

  it("pages through a filter in small pages without losing an entry or going round in circles", async () => {
    const start = await newestId();
    await logMixedLines("pagingProbe");
    await rpc(app.url, "plugin/rt/stats", { body: {} }); // a last line the filter skips
    const unfiltered = await allPages({ afterId: start, limit: 500 });
    const newest = unfiltered.entries[unfiltered.entries.length - 1]!.id;
    const expected = unfiltered.entries.filter((entry) => entry.level === "warn").map((entry) => entry.id);
    expect(expected).toHaveLength(3);

    const paged = await allPages({ afterId: start, limit: 1, level: "warn" });
    expect(paged.entries.map((entry) => entry.id)).toEqual(expected);
    expect(paged.pages).toBe(3);
    // The last page looked at every entry after the last match: the next poll starts past them.
    expect(paged.last.nextAfterId).toBeGreaterThanOrEqual(newest);

    // A filter that matches nothing moves on past what it skipped, and stops.
    const none = await logs({ afterId: start, limit: 10, search: "no entry holds this text" });
    expect(none).toMatchObject({ entries: [], hasMore: false });
    expect(none.nextAfterId).toBeGreaterThanOrEqual(newest);
  });

  it("answers an afterId from an earlier run (past every id given) with nextAfterId 0, so paging starts again", async () => {
    const newest = await newestId();
    const page = await logs({ afterId: newest + 1_000 });
    expect(page).toMatchObject({ entries: [], nextAfterId: 0, lastId: 0, hasMore: true });
  });

  /** The id of the newest entry now buffered. */
  async function newestId(): Promise<number> {
    const { last } = await allPages({ afterId: 0, limit: 500 });
    return last.nextAfterId;
  }
});

describe("without dev mode", () => {
  let app: TestServer;
  beforeAll(async () => {
    app = await startServer({ root: ROOT });
  });
  afterAll(() => app.close());

  it("the server routes do not exist", async () => {
    const viewer = await openViewer(app.url);
    for (const path of ["server/core/getStatus", "server/core/getLogs", "server/dev/getLogs"]) {
      const answer = await rpc(app.url, path, { viewer });
      expect([answer.status, answer.body.code]).toEqual([404, "RPC_UNKNOWN_TARGET"]);
    }
  });
});
