// Regression tests: a client that leaves at any step must neither crash the server nor
// leave a call unaccounted for (exactly one log event), nor start the method.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { join } from "node:path";
import { request as httpRequest } from "node:http";
import { startServer, type TestServer } from "../helpers/server.js";
import { rpc } from "../helpers/http.js";

const ROOT = join(import.meta.dirname, "../fixtures/gateway-app");
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Sends a call and destroys the socket after `leaveAfterMs`. */
function leaveEarly(url: string, path: string, body: unknown, leaveAfterMs: number): Promise<void> {
  const target = new URL(url);
  return new Promise((resolve) => {
    const req = httpRequest({ host: target.hostname, port: target.port, path, method: "POST", headers: { "content-type": "application/json" } });
    req.on("error", () => resolve());
    req.end(JSON.stringify(body));
    setTimeout(() => {
      req.destroy();
      resolve();
    }, leaveAfterMs);
  });
}

describe("a client that leaves early", () => {
  let app: TestServer;
  beforeAll(async () => {
    app = await startServer({ root: ROOT });
  });
  afterAll(() => app.close());

  it("while a verifier is still checking: the method never starts, the server stays up, one event", async () => {
    const before = app.logs.events().length;
    await leaveEarly(app.url, "/__rpc/plugin/matrix/checksSignal", { contextId: "slow" }, 100);
    await sleep(500);
    const events = app.logs.events().slice(before);
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ event: "rpc.error", status: 499, code: "RPC_CLIENT_CLOSED", method: "checksSignal" });
    const { ran } = (await import(join(ROOT, "plugins/matrix/methods.server.mjs"))) as { ran: { checksSignal: number } };
    expect(ran.checksSignal).toBe(0);
    // Still serving.
    expect((await rpc(app.url, "plugin/matrix/open")).status).toBe(200);
  });

  it("while an async public check runs: the body read does not hang, one event", async () => {
    const before = app.logs.events().length;
    await leaveEarly(app.url, "/__rpc/plugin/matrix/slowPublic", {}, 100);
    await sleep(500);
    const events = app.logs.events().slice(before);
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ status: 499, method: "slowPublic" });
  });
});
