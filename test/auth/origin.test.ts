// docs/guides/server-methods.md "Cross-origin calls": a session-bound call that the browser says came from another
// origin is refused with 403 RPC_BAD_ORIGIN; server.allowedOrigins lists the exceptions, and
// behind a trusted reverse proxy the forwarded host and protocol make the server's own origin.
import { describe, expect, it } from "vitest";
import { join } from "node:path";
import { startServer, useServer, type TestServer } from "../helpers/server.js";
import { openViewer, rpc } from "../helpers/http.js";

const ROOT = join(import.meta.dirname, "../fixtures/gateway-app");

describe("the origin of a session-bound call", () => {
  const app = useServer({ root: ROOT });

  it("refuses a session-bound call from another origin with 403 RPC_BAD_ORIGIN", async () => {
    const answer = await rpc(app.url, "plugin/matrix/sessionOnly", { viewer: app.viewer, headers: { origin: "https://evil.example" } });
    expect([answer.status, answer.body.code]).toEqual([403, "RPC_BAD_ORIGIN"]);
    const nullOrigin = await rpc(app.url, "plugin/matrix/sessionOnly", { viewer: app.viewer, headers: { origin: "null" } });
    expect(nullOrigin.body.code).toBe("RPC_BAD_ORIGIN");
  });

  it("refuses Sec-Fetch-Site: cross-site", async () => {
    const answer = await rpc(app.url, "plugin/matrix/sessionOnly", { viewer: app.viewer, headers: { "sec-fetch-site": "cross-site" } });
    expect(answer.body.code).toBe("RPC_BAD_ORIGIN");
  });

  it("accepts its own origin and same-origin fetch metadata", async () => {
    const answer = await rpc(app.url, "plugin/matrix/sessionOnly", {
      viewer: app.viewer,
      headers: { origin: app.url, "sec-fetch-site": "same-origin" },
    });
    expect(answer.status).toBe(200);
  });

  it("does not apply to public methods", async () => {
    const answer = await rpc(app.url, "plugin/matrix/open", { headers: { origin: "https://evil.example", "sec-fetch-site": "cross-site" } });
    expect(answer.status).toBe(200);
  });
});

describe("origins the server accepts besides its own", () => {
  const fromOrigin = async (app: TestServer, headers: Record<string, string>) =>
    (await rpc(app.url, "plugin/matrix/sessionOnly", { viewer: await openViewer(app.url), headers })).status;

  it("accepts an origin listed in server.allowedOrigins, however its URL is written, and no other", async () => {
    const app = await startServer({ root: ROOT, config: { server: { allowedOrigins: ["https://viewer.example/"] } } });
    try {
      expect(await fromOrigin(app, { origin: "https://viewer.example" })).toBe(200);
      expect(await fromOrigin(app, { origin: "https://other.example" })).toBe(403);
      expect(await fromOrigin(app, { origin: "http://viewer.example" })).toBe(403);
    } finally {
      await app.close();
    }
  });

  it("takes the forwarded host and protocol as its own origin only behind a trusted proxy", async () => {
    const forwarded = { origin: "https://app.example", "x-forwarded-host": "app.example", "x-forwarded-proto": "https" };
    const trusted = await startServer({ root: ROOT, config: { server: { trustProxy: true } } });
    const untrusted = await startServer({ root: ROOT, config: {} });
    try {
      expect(await fromOrigin(trusted, forwarded)).toBe(200);
      expect(await fromOrigin(untrusted, forwarded)).toBe(403);
    } finally {
      await Promise.all([trusted.close(), untrusted.close()]);
    }
  });
});
