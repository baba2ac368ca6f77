// docs/guides/server-methods.md "Dev mode": the dev log behind getLogs — every line with an id that only grows, paged
// forward with afterId = lastId, the logged item's own id kept as itemId, and at most
// APP_DEV_LOG_MAX_ENTRIES entries. (The route itself: test/rpc/dev-routes.test.ts.)
import { describe, expect, it } from "vitest";
import { join } from "node:path";
import { useServer } from "../helpers/server.js";
import { rpc } from "../helpers/http.js";

const ROOT = join(import.meta.dirname, "../fixtures/runtime-app");

describe("the dev log ring buffer", () => {
  const app = useServer({ root: ROOT, dev: true, env: { APP_DEV_LOG_MAX_ENTRIES: "50" }, config: {} });

  it("getLogs pages forward with afterId = lastId, oldest first; dev/getLogs is an alias", async () => {
    for (let i = 0; i < 5; i++) await rpc(app.url, "plugin/rt/stats", { body: {} });
    const first = await rpc(app.url, "server/core/getLogs", { viewer: app.viewer, body: { args: [{ afterId: 0, limit: 3 }] } });
    expect(first.status).toBe(200);
    const page1 = first.body.result;
    expect(page1.entries).toHaveLength(3);
    expect(page1.entries.map((entry: { id: number }) => entry.id)).toEqual([page1.entries[0].id, page1.entries[0].id + 1, page1.entries[0].id + 2]);
    expect(page1.lastId).toBe(page1.entries[2].id);
    expect(page1.entries[0]).toMatchObject({ time: expect.any(Number), level: expect.any(String), msg: expect.any(String) });
    const second = await rpc(app.url, "server/dev/getLogs", { viewer: app.viewer, body: { args: [{ afterId: page1.lastId, limit: 1000 }] } });
    const page2 = second.body.result;
    expect(page2.entries[0].id).toBe(page1.lastId + 1);
    const events = [...page1.entries, ...page2.entries].filter((entry: { event?: string }) => entry.event === "rpc.complete");
    expect(events.length).toBeGreaterThanOrEqual(5);
    const none = await rpc(app.url, "server/core/getLogs", { viewer: app.viewer, body: { args: [{ afterId: page2.lastId + 1000 }] } });
    expect(none.body.result.entries).toEqual([]);
  });

  it("getLogs entries keep the plugin id as itemId beside their own sequence id", async () => {
    const before = await rpc(app.url, "server/core/getLogs", { viewer: app.viewer, body: { args: [{ afterId: 0, limit: 1000 }] } });
    expect((await rpc(app.url, "plugin/rt/stats", { body: {} })).status).toBe(200);
    const answer = await rpc(app.url, "server/core/getLogs", { viewer: app.viewer, body: { args: [{ afterId: before.body.result.lastId, limit: 1000 }] } });
    const event = answer.body.result.entries.find(
      (entry: { event?: string; method?: string }) => entry.event === "rpc.complete" && entry.method === "stats",
    );
    expect(event).toMatchObject({ kind: "plugin", itemId: "rt", method: "stats", id: expect.any(Number) });
    expect(event.id).toBeGreaterThan(before.body.result.lastId);
  });

  it("keeps at most APP_DEV_LOG_MAX_ENTRIES entries", async () => {
    for (let i = 0; i < 60; i++) await rpc(app.url, "plugin/rt/stats", { body: {} });
    const answer = await rpc(app.url, "server/core/getLogs", { viewer: app.viewer, body: { args: [{ afterId: 0, limit: 1000 }] } });
    expect(answer.body.result.entries.length).toBe(50);
  });
});
