// docs/reference/http-routes.md: what is served, what never is, and the viewer page bootstrap.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { join } from "node:path";
import { startServer, type TestServer } from "../helpers/server.js";
import { rawRequest } from "../helpers/http.js";

const ROOT = join(import.meta.dirname, "../fixtures/gateway-app");

describe("static serving", () => {
  let app: TestServer;
  beforeAll(async () => {
    app = await startServer({ root: ROOT });
  });
  afterAll(() => app.close());

  const get = (path: string) => rawRequest(app.url, { path, method: "GET" });

  // The session cookie and the CSRF token themselves: test/auth/session.test.ts.
  it("serves public/index.html at / with a session cookie and the injected bootstrap", async () => {
    const response = await fetch(app.url + "/");
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toMatch(/^text\/html/);
    expect(response.headers.get("cache-control")).toBe("no-store");
    expect(response.headers.get("set-cookie")).toMatch(/^app_session=/);
    const html = await response.text();
    // Both scripts carry the response's CSP nonce (test/http/security-headers.test.ts).
    expect(html).toMatch(/<script nonce="([^"]+)">window\.APP_CSRF_TOKEN = "[\w-]+";<\/script><script nonce="\1" src="\/__app\/client\.js"><\/script><\/head>/);
  });

  it("puts the bootstrap right after <body> in a page without </head>", async () => {
    const html = await (await fetch(app.url + "/sub/page.html")).text();
    expect(html).toMatch(/<body><script nonce="([^"]+)">window\.APP_CSRF_TOKEN = "[\w-]+";<\/script><script nonce="\1" src="\/__app\/client\.js">/);
  });

  it("serves other public files and plugin assets", async () => {
    const css = await fetch(app.url + "/site.css");
    expect(css.status).toBe(200);
    expect(css.headers.get("content-type")).toMatch(/^text\/css/);
    expect(await css.text()).toContain("color: red");
    const asset = await fetch(app.url + "/plugins/matrix/asset.txt");
    expect(await asset.text()).toBe("plugin asset\n");
  });

  it("answers GET /health with 200 {status: ok}", async () => {
    const response = await fetch(app.url + "/health");
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ status: "ok" });
  });

  const neverServed = [
    "/plugins/matrix/methods.server.mjs",
    "/plugins/matrix/lib/typed.server.ts",
    "/plugins/matrix/register.server.mjs",
    "/modules/tools/tools.server.js",
    "/plugins/matrix/node_modules/dep/hidden.server.mjs",
    "/plugins/matrix/.hidden/secret.server.mjs",
    "/app.config.json",
    "/.env",
    "/plugins/../app.config.json",
    "/%2e%2e/app.config.json",
    "/%2E%2E/%2E%2E/etc/passwd",
    "/..%2fapp.config.json",
    "/plugins/matrix/..%2f..%2fapp.config.json",
    "/plugins/matrix/%2e%2e/%2e%2e/app.config.json",
    "/..%5capp.config.json",
    "/plugins/matrix/..\\..\\app.config.json",
    "/site.css%00.html",
    "/plugins/matrix/asset.txt%00",
    "/%252e%252e/app.config.json",
    "/plugins/%2e%2e/app.config.json",
    "/public/index.html",
    "/modules/tools/package.json/../../../app.config.json",
  ];
  for (const path of neverServed) {
    it(`never serves ${path}`, async () => {
      const response = await get(path);
      expect([400, 404]).toContain(response.status);
      expect(response.body).not.toContain("rpcVerifiers");
      expect(response.body).not.toContain("export ");
      expect(response.body).not.toContain("SECRET=1");
      expect(response.body).not.toContain("root:");
    });
  }

  it("answers unknown paths with a JSON 404", async () => {
    const response = await fetch(app.url + "/nope.txt");
    expect(response.status).toBe(404);
    expect(await response.json()).toEqual({ error: "Not found", code: "NOT_FOUND", details: {} });
  });
});

describe("answers Fastify gives itself", () => {
  it("a URL that cannot be decoded answers 400 in the error shape, echoing nothing", async () => {
    const app = await startServer({ root: ROOT });
    try {
      const answer = await rawRequest(app.url, { path: "/__rpc/plugin/%E0%A4%A/x", method: "POST" });
      expect(answer.status).toBe(400);
      expect(JSON.parse(answer.body)).toEqual({ error: "Bad request", code: "BAD_REQUEST", details: {} });
    } finally {
      await app.close();
    }
  });
});
