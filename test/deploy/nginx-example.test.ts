/**
 * docs/guides/deployment.md "nginx", its `location /` block read from the doc itself, in a real
 * nginx on a port other than 80/443 (a free one): the page's session-bound calls, which
 * carry the page's Origin with its port, must pass the origin check. Forwarding `$host`
 * dropped the port and refused every one with 403 RPC_BAD_ORIGIN.
 */
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openViewer, rpc } from "../helpers/http.js";
import { describeWithNginx, docsNginxLocation, startNginx, type Nginx } from "../helpers/nginx.js";
import { startServer, type TestServer } from "../helpers/server.js";

const ROOT = join(import.meta.dirname, "../fixtures/gateway-app");

describe("the doc's nginx location block", () => {
  it("is found, and forwards the Host with its port", () => {
    const location = docsNginxLocation("/");
    expect(location).toContain("proxy_set_header X-Forwarded-Proto $scheme;");
    expect(location).toMatch(/proxy_set_header Host \$http_host;/);
  });
});

for (const trustProxy of [true, false]) {
  describeWithNginx(`a session-bound call through the doc's nginx on a non-default port (trustProxy: ${trustProxy})`, () => {
    let app: TestServer;
    let nginx: Nginx;
    beforeAll(async () => {
      app = await startServer({ root: ROOT, config: { server: { trustProxy } } });
      nginx = await startNginx(app.url, docsNginxLocation("/"));
    });
    afterAll(async () => {
      await nginx?.stop();
      await app?.close();
    });

    it("passes the origin check with the page's own Origin", async () => {
      expect(new URL(nginx.url).port).not.toBe("80");
      const viewer = await openViewer(nginx.url);
      const answer = await rpc(nginx.url, "plugin/matrix/sessionOnly", {
        viewer,
        headers: { origin: nginx.url, "sec-fetch-site": "same-origin" },
      });
      expect([answer.status, answer.body?.code]).toEqual([200, undefined]);
    });
  });
}

describe("a refused origin's log line", () => {
  let app: TestServer;
  beforeAll(async () => {
    app = await startServer({ root: ROOT });
  });
  afterAll(async () => app?.close());

  it("names the Origin received and the origin expected, the received one cut short and without control characters", async () => {
    const viewer = await openViewer(app.url);
    // A tab is the one control character HTTP lets through in a header value.
    const hostile = `https://evil.example/\t${"x".repeat(300)}`;
    const logged = `${hostile.replace("\t", "\uFFFD").slice(0, 100)}…`;
    const answer = await rpc(app.url, "plugin/matrix/sessionOnly", { viewer, headers: { origin: hostile } });
    expect([answer.status, answer.body]).toEqual([403, { error: "Cross-origin call refused", code: "RPC_BAD_ORIGIN", details: {} }]);
    const event = app.logs.events().find((line) => line.code === "RPC_BAD_ORIGIN")!;
    const err = event.err as { message: string; origin: string; expectedOrigin: string };
    expect(err.origin).toBe(logged);
    expect(err.expectedOrigin).toBe(app.url);
    expect(err.message).toContain(`Origin ${logged} is not this server's origin ${app.url} (from Host)`);
    expect(err.message).toContain("server.allowedOrigins");
  });

  it("names a cross-site fetch when the Origin is absent", async () => {
    const viewer = await openViewer(app.url);
    const answer = await rpc(app.url, "plugin/matrix/sessionOnly", { viewer, headers: { "sec-fetch-site": "cross-site" } });
    expect(answer.status).toBe(403);
    const event = app.logs.events().filter((line) => line.code === "RPC_BAD_ORIGIN").at(-1)!;
    expect((event.err as { message: string }).message).toMatch(/^Sec-Fetch-Site: cross-site/);
  });
});
