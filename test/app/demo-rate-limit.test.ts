// The bundled demo's model-like method, greeter.tell, spends a budget per turn: each
// viewer gets 5 a minute (docs/guides/server-methods.md "Rate limits"), then 429 RPC_RATE_LIMITED.
import { afterAll, beforeAll, expect, it } from "vitest";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { DEMO_ROOT } from "../../dist/index.js";
import { startServer, type TestServer } from "../helpers/server.js";
import { closedPort, openViewer, rpc } from "../helpers/http.js";

let app: TestServer;
beforeAll(async () => {
  const upstreamPort = await closedPort();
  // The demo's boot hook starts its upstream on this port (test/proxy/demo.test.ts).
  process.env.DEMO_UPSTREAM_PORT = String(upstreamPort);
  const text = readFileSync(join(DEMO_ROOT, "app.config.json"), "utf8").replaceAll("127.0.0.1:8089", `127.0.0.1:${upstreamPort}`);
  app = await startServer({ root: DEMO_ROOT, config: JSON.parse(text) });
});
afterAll(() => app.close());

it("greeter.tell admits 5 stories a minute per session, then answers 429 RPC_RATE_LIMITED", async () => {
  const viewer = await openViewer(app.url);
  const tell = () => rpc(app.url, "plugin/greeter/tell", { viewer, headers: { "x-app-rpc-stream": "1" }, body: { args: [{ delayMs: 0 }] } });
  for (let i = 0; i < 5; i++) expect((await tell()).status).toBe(200);
  const refused = await tell();
  expect([refused.status, refused.body.code]).toEqual([429, "RPC_RATE_LIMITED"]);
  expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(50);
  // Another viewer has its own five.
  expect((await rpc(app.url, "plugin/greeter/tell", { viewer: await openViewer(app.url), headers: { "x-app-rpc-stream": "1" }, body: { args: [{ delayMs: 0 }] } })).status).toBe(200);
});
