// README "Dev mode": dev-mode routes getStatus / getLogs (and the dev alias), absent
// outside dev mode. (What getLogs pages through: test/log/ring-buffer.test.ts.)
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
