// The bundled demo's proxy aliases: the boot hook's upstream on loopback, the API-key-only
// alias, and the JWT alias with a token from the demo's public token method.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { DEMO_ROOT } from "../../dist/index.js";
import { startServer, type TestServer } from "../helpers/server.js";
import { closedPort, openViewer, rpc, send, type Viewer } from "../helpers/http.js";

describe("demo proxy aliases", () => {
  let app: TestServer;
  let viewer: Viewer;
  let upstreamPort: number;
  beforeAll(async () => {
    upstreamPort = await closedPort();
    // The boot hook reads the port from the process environment; the config names it too.
    process.env.DEMO_UPSTREAM_PORT = String(upstreamPort);
    const text = readFileSync(join(DEMO_ROOT, "app.config.json"), "utf8").replaceAll("127.0.0.1:8089", `127.0.0.1:${upstreamPort}`);
    app = await startServer({ root: DEMO_ROOT, config: JSON.parse(text) });
    viewer = await openViewer(app.url);
    // The upstream starts listening as the boot hook returns; wait until it answers.
    for (let i = 0; i < 50; i += 1) {
      const probe = await fetch(`http://127.0.0.1:${upstreamPort}/`).catch(() => null);
      if (probe) break;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  });
  afterAll(async () => {
    await app.close();
  });

  it("refuses direct calls to the upstream, which lack the API key", async () => {
    const direct = await fetch(`http://127.0.0.1:${upstreamPort}/api/hello`);
    expect(direct.status).toBe(401);
  });

  it("demo-api adds the API key and needs no token", async () => {
    const answer = await send(app.url, "/proxy/demo-api/hello?name=ada", { viewer });
    expect(answer.status).toBe(200);
    expect(answer.json).toMatchObject({ method: "GET", path: "/api/hello", query: { name: "ada" }, apiKeyReceived: true, user: null });
  });

  it("demo-secure needs a token from the public demo token method, and passes its sub", async () => {
    const refused = await send(app.url, "/proxy/demo-secure/me", { viewer });
    expect([refused.status, refused.json.code]).toEqual([401, "PROXY_AUTH_FAILED"]);
    const minted = await rpc(app.url, "module/upstream-demo/issueDemoToken", { body: { args: [{ user: "ada" }] } });
    expect(minted.status).toBe(200);
    expect(minted.body.result).toMatchObject({ type: "jwt", contextId: "demo-secure", token: expect.stringMatching(/^[\w-]+\.[\w-]+\.[\w-]+$/) });
    const answer = await send(app.url, "/proxy/demo-secure/me", { viewer, headers: { authorization: `Bearer ${minted.body.result.token}` } });
    expect(answer.status).toBe(200);
    expect(answer.json).toMatchObject({ path: "/secure/me", apiKeyReceived: true, user: "ada", authorizationForwarded: false });
  });
});
