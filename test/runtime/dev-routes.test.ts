// README "Dev mode": dev-mode routes getStatus / getLogs (and the dev alias), absent
// outside dev mode; logs never carry secrets.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { join } from "node:path";
import { openViewer, rpc, startServer, type TestServer, type Viewer } from "../helpers/server.js";

const ROOT = join(import.meta.dirname, "../fixtures/runtime-app");

describe("dev mode routes", () => {
  let app: TestServer;
  let viewer: Viewer;
  beforeAll(async () => {
    app = await startServer({
      root: ROOT,
      dev: true,
      env: { APP_DEV_LOG_MAX_ENTRIES: "50", DEMO_SECRET: "configured-secret-value-123", QUOTED: 'we"ird\\secret', PIN: "1234567" },
      config: { plugins: { rt: { apiKey: "<% DEMO_SECRET %>", quoted: "<% QUOTED %>", pin: "<% PIN %>" } }, server: { auth: { jwt: { secret: "another-configured-secret-of-32-bytes!!" } } } },
    });
    viewer = await openViewer(app.url);
  });
  afterAll(() => app.close());

  it("getStatus reports the process, the registry with policies, breakers and queues", async () => {
    await rpc(app.url, "plugin/rt/limited", { viewer, body: { args: [1, "x"] } });
    const answer = await rpc(app.url, "server/core/getStatus", { viewer });
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

  it("getLogs pages forward with afterId = lastId, oldest first; dev/getLogs is an alias", async () => {
    for (let i = 0; i < 5; i++) await rpc(app.url, "plugin/rt/stats", { body: {} });
    const first = await rpc(app.url, "server/core/getLogs", { viewer, body: { args: [{ afterId: 0, limit: 3 }] } });
    expect(first.status).toBe(200);
    const page1 = first.body.result;
    expect(page1.entries).toHaveLength(3);
    expect(page1.entries.map((entry: { id: number }) => entry.id)).toEqual([page1.entries[0].id, page1.entries[0].id + 1, page1.entries[0].id + 2]);
    expect(page1.lastId).toBe(page1.entries[2].id);
    expect(page1.entries[0]).toMatchObject({ time: expect.any(Number), level: expect.any(String), msg: expect.any(String) });
    const second = await rpc(app.url, "server/dev/getLogs", { viewer, body: { args: [{ afterId: page1.lastId, limit: 1000 }] } });
    const page2 = second.body.result;
    expect(page2.entries[0].id).toBe(page1.lastId + 1);
    const events = page2.entries.filter((entry: { event?: string }) => entry.event === "rpc.complete");
    expect(events.length).toBeGreaterThanOrEqual(5);
    const none = await rpc(app.url, "server/core/getLogs", { viewer, body: { args: [{ afterId: page2.lastId + 1000 }] } });
    expect(none.body.result.entries).toEqual([]);
  });

  it("getLogs entries keep the plugin id as itemId beside their own sequence id", async () => {
    const before = await rpc(app.url, "server/core/getLogs", { viewer, body: { args: [{ afterId: 0, limit: 1000 }] } });
    expect((await rpc(app.url, "plugin/rt/stats", { body: {} })).status).toBe(200);
    const answer = await rpc(app.url, "server/core/getLogs", { viewer, body: { args: [{ afterId: before.body.result.lastId, limit: 1000 }] } });
    const event = answer.body.result.entries.find(
      (entry: { event?: string; method?: string }) => entry.event === "rpc.complete" && entry.method === "stats",
    );
    expect(event).toMatchObject({ kind: "plugin", itemId: "rt", method: "stats", id: expect.any(Number) });
    expect(event.id).toBeGreaterThan(before.body.result.lastId);
  });

  it("keeps at most APP_DEV_LOG_MAX_ENTRIES entries", async () => {
    for (let i = 0; i < 60; i++) await rpc(app.url, "plugin/rt/stats", { body: {} });
    const answer = await rpc(app.url, "server/core/getLogs", { viewer, body: { args: [{ afterId: 0, limit: 1000 }] } });
    expect(answer.body.result.entries.length).toBe(50);
  });

  it("refuses a bad getLogs payload with 400", async () => {
    const answer = await rpc(app.url, "server/core/getLogs", { viewer, body: { args: [{ afterId: "x" }] } });
    expect([answer.status, answer.body.code]).toEqual([400, "RPC_BAD_REQUEST"]);
  });

  it("never logs configured secrets, even when a method logs one or throws it", async () => {
    const answer = await rpc(app.url, "plugin/rt/leak", { viewer });
    expect(answer.status).toBe(500);
    const text = app.logs.text();
    expect(text).toContain("calling upstream with key [Redacted]");
    expect(text).toContain("upstream refused key [Redacted]");
    expect(text).not.toContain("configured-secret-value-123");

    // Secrets that JSON escapes, and digit-only secrets: masked, and every line still JSON.
    expect((await rpc(app.url, "plugin/rt/leakMore", { viewer })).status).toBe(200);
    const line = app.logs.lines.find((entry) => typeof entry.msg === "string" && entry.msg.startsWith("quoted "));
    expect(line).toMatchObject({ msg: "quoted [Redacted] pin [Redacted]", quoted: "[Redacted]", count: 91234567, pin: "[Redacted]", pins: ["[Redacted]"] });
    expect(app.logs.lines.filter((entry) => "raw" in entry)).toEqual([]);
    expect(text).not.toContain("another-configured-secret-of-32-bytes!!");
  });
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
