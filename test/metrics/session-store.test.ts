// docs/reference/metrics.md, session data (docs/guides/sessions-and-state.md): the
// store's loads and saves timed by kind and operation, its failures counted by code, and a
// remote store's guard (open while the store is unreachable, with the loads it refused at
// once), scraped over HTTP after real calls, with the in-memory store and with a real
// redis-server that is killed and brought back.
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { openViewer, rpc, type Viewer } from "../helpers/http.js";
import { sample, scrape } from "../helpers/metrics.js";
import { describeWithRedis, useRedis } from "../helpers/redis.js";
import { startServer, useServer } from "../helpers/server.js";
import { waitFor } from "../helpers/wait.js";
import { MemorySessionStore } from "../../dist/state/memory-session-store.js";

const ROOT = join(import.meta.dirname, "../fixtures/session-app");
const config = (server: Record<string, unknown> = {}) => ({
  server: { metrics: { enabled: true }, session: { maxDataBytes: 4096 }, ...server },
  plugins: { notes: {} },
});
const notes = (url: string, viewer: Viewer, method: string, ...args: unknown[]) => rpc(url, `plugin/notes/${method}`, { viewer, body: { args } });
const count = (text: string, kind: string, operation: string) => sample(text, "app_session_store_duration_seconds_count", { kind, operation }) ?? 0;

describe("session store metrics, memory store", () => {
  const app = useServer({ root: ROOT, config: config() });

  it("times every load and every save that had something to save", async () => {
    const before = await scrape(app.url);
    expect((await notes(app.url, app.viewer, "remember", { key: "color", value: "teal" })).status).toBe(200);
    expect((await notes(app.url, app.viewer, "recall", "color")).body.result).toBe("teal");
    expect((await notes(app.url, app.viewer, "recall", "color")).status).toBe(200);
    const after = await scrape(app.url);
    // Three session-bound calls load; only the one that changed the data saves.
    expect(count(after, "memory", "load") - count(before, "memory", "load")).toBe(3);
    expect(count(after, "memory", "save") - count(before, "memory", "save")).toBe(1);
    expect(sample(after, "app_session_store_duration_seconds_bucket", { kind: "memory", operation: "load", le: "+Inf" })).toBe(count(after, "memory", "load"));
    // Neither a guard nor its series for a store in this process.
    expect(sample(after, "app_session_store_circuit_open", { kind: "memory" })).toBeUndefined();
  });

  it("counts a save refused as too large under SESSION_DATA_TOO_LARGE", async () => {
    const refused = await notes(app.url, app.viewer, "writeMuch", 5_000);
    expect([refused.status, refused.body.code]).toEqual([413, "SESSION_DATA_TOO_LARGE"]);
    const text = await scrape(app.url);
    expect(sample(text, "app_session_store_errors_total", { kind: "memory", operation: "save", code: "SESSION_DATA_TOO_LARGE" })).toBe(1);
    expect(sample(text, "app_session_store_errors_total", { kind: "memory", operation: "load", code: "SESSION_DATA_TOO_LARGE" })).toBeUndefined();
  });
});

describe("session store metrics, metrics off", () => {
  it("does not time the store when nobody can scrape", async () => {
    const app = await startServer({ root: ROOT, config: { plugins: { notes: {} } } });
    try {
      expect((await fetch(app.url + "/metrics")).status).toBe(404);
      // The calls use the in-memory store itself, with nothing timing it.
      expect(app.server.core.sessionStore).toBeInstanceOf(MemorySessionStore);
    } finally {
      await app.close();
    }
  });
});

describeWithRedis("session store metrics, Redis store", () => {
  const redis = useRedis();

  it("times loads and saves, counts failures once Redis is killed, and shows the guard open until it is back", async () => {
    const app = await startServer({ root: ROOT, config: config({ redis: { url: redis.url, commandTimeoutMs: 300 } }) });
    let calls = 0;
    const recall = async (viewer: Viewer) => {
      calls += 1;
      return notes(app.url, viewer, "recall", "color");
    };
    try {
      const viewer = await openViewer(app.url);
      expect((await notes(app.url, viewer, "remember", { key: "color", value: "teal" })).status).toBe(200);
      calls += 1;
      expect((await recall(viewer)).body.result).toBe("teal");
      const up = await scrape(app.url);
      expect(count(up, "redis", "load")).toBe(2);
      expect(count(up, "redis", "save")).toBe(1);
      expect(sample(up, "app_session_store_circuit_open", { kind: "redis" })).toBe(0);
      expect(sample(up, "app_session_store_errors_total", { kind: "redis", operation: "load", code: "SESSION_STORE_UNAVAILABLE" })).toBeUndefined();

      await redis.kill();
      await waitFor(async () => (await recall(viewer)).status === 503, 5_000, "a call to find Redis gone");
      // And one more while the guard is open.
      expect((await recall(viewer)).body.code).toBe("SESSION_STORE_UNAVAILABLE");
      const down = await scrape(app.url);
      const failed = sample(down, "app_session_store_errors_total", { kind: "redis", operation: "load", code: "SESSION_STORE_UNAVAILABLE" }) ?? 0;
      const skipped = sample(down, "app_session_store_skipped_total", { kind: "redis", operation: "load" }) ?? 0;
      expect(failed).toBeGreaterThanOrEqual(1);
      expect(sample(down, "app_session_store_circuit_open", { kind: "redis" })).toBe(1);
      // Every load a call asked for either reached Redis (timed, failed or not) or was refused by the guard.
      expect(count(down, "redis", "load") + skipped).toBe(calls);

      await redis.restart();
      await waitFor(async () => (await recall(viewer)).status === 200, 5_000, "a call to reach Redis again");
      const back = await scrape(app.url);
      expect(sample(back, "app_session_store_circuit_open", { kind: "redis" })).toBe(0);
      expect(count(back, "redis", "load") + (sample(back, "app_session_store_skipped_total", { kind: "redis", operation: "load" }) ?? 0)).toBe(calls);
    } finally {
      await app.close();
    }
  });

  it("counts a save Redis refused as too large", async () => {
    const app = await startServer({ root: ROOT, config: config({ redis: { url: redis.url } }) });
    try {
      const viewer = await openViewer(app.url);
      const refused = await notes(app.url, viewer, "writeMuch", 5_000);
      expect([refused.status, refused.body.code]).toEqual([413, "SESSION_DATA_TOO_LARGE"]);
      const text = await scrape(app.url);
      expect(sample(text, "app_session_store_errors_total", { kind: "redis", operation: "save", code: "SESSION_DATA_TOO_LARGE" })).toBe(1);
      expect(count(text, "redis", "save")).toBe(1);
    } finally {
      await app.close();
    }
  });
});
