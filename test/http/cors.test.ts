// docs/guides/browser.md "Cross-origin viewers": CORS for the origins in server.allowedOrigins on /__rpc and
// /proxy, preflight included, with credentials; nothing for any other origin or route.
// The same in a browser: cors-browser.test.ts.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { join } from "node:path";
import { startServer, type TestServer } from "../helpers/server.js";
import { openViewer, send, type Viewer } from "../helpers/http.js";
import { openStream } from "../helpers/stream.js";
import { TestUpstream } from "../helpers/upstream.js";

const ROOT = join(import.meta.dirname, "../fixtures/headers-app");
const LISTED = "https://viewer.example";
const UNLISTED = "https://evil.example";

const CORS_HEADERS = [
  "access-control-allow-origin",
  "access-control-allow-credentials",
  "access-control-allow-methods",
  "access-control-allow-headers",
  "access-control-expose-headers",
  "access-control-max-age",
];
const corsOf = (headers: Record<string, unknown>) => Object.fromEntries(CORS_HEADERS.filter((name) => headers[name] !== undefined).map((name) => [name, headers[name]]));

function preflight(url: string, path: string, origin: string, method = "POST", requestHeaders = "content-type, x-app-csrf") {
  return send(url, path, {
    method: "OPTIONS",
    headers: { origin, "access-control-request-method": method, "access-control-request-headers": requestHeaders },
  });
}

describe("CORS for server.allowedOrigins", () => {
  let upstream: TestUpstream;
  let app: TestServer;
  let viewer: Viewer;
  beforeAll(async () => {
    upstream = await new TestUpstream().start();
    upstream.routes.set("/cors-upstream", (_req, res) => {
      res.writeHead(200, { "content-type": "application/json", "access-control-allow-origin": "*", "access-control-allow-credentials": "false", vary: "Accept-Language" });
      res.end("{}");
    });
    app = await startServer({
      root: ROOT,
      config: { server: { allowedOrigins: [LISTED], secure: { proxies: { up: { baseUrl: upstream.origin } } } } },
    });
    viewer = await openViewer(app.url);
  });
  afterAll(async () => {
    await app?.close();
    await upstream?.close();
  });

  it("answers a listed origin's preflight to /__rpc with 204 and what the call may send", async () => {
    const answer = await preflight(app.url, "/__rpc/plugin/probe/hello", LISTED, "POST", "content-type, x-app-csrf, x-app-rpc-stream, authorization, x-partner-key");
    expect(answer.status).toBe(204);
    expect(answer.body).toBe("");
    expect(corsOf(answer.headers)).toEqual({
      "access-control-allow-origin": LISTED,
      "access-control-allow-credentials": "true",
      "access-control-allow-methods": "POST",
      "access-control-allow-headers": "content-type, x-app-csrf, x-app-rpc-stream, authorization, x-partner-key",
      "access-control-max-age": "600",
    });
    expect(answer.headers.vary).toBe("Origin, Access-Control-Request-Method, Access-Control-Request-Headers");
    // A preflight is no call: the gateway logs none.
    expect(app.logs.events().filter((event) => event.method === "hello")).toEqual([]);
  });

  it("answers a listed origin's preflight to /proxy with the verbs the proxy forwards, without reaching the upstream", async () => {
    const before = upstream.seen.length;
    const answer = await preflight(app.url, "/proxy/up/items", LISTED, "PUT");
    expect(answer.status).toBe(204);
    expect(corsOf(answer.headers)).toMatchObject({
      "access-control-allow-origin": LISTED,
      "access-control-allow-credentials": "true",
      "access-control-allow-methods": "GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS",
    });
    expect(upstream.seen.length).toBe(before);
  });

  it("lets a listed origin read answers, with credentials and the headers the client reads", async () => {
    const headers = { origin: LISTED, "content-type": "application/json" };
    const answers = [
      await send(app.url, "/__rpc/plugin/probe/hello", { method: "POST", viewer, headers, body: "{}" }),
      await send(app.url, "/__rpc/plugin/probe/open", { method: "POST", headers, body: "{}" }),
      // Refusals too: the page must be able to read why.
      await send(app.url, "/__rpc/plugin/probe/hello", { method: "POST", headers, body: "{}" }),
      await send(app.url, "/proxy/up/x", { viewer, headers: { origin: LISTED } }),
      await send(app.url, "/proxy/up/x", { headers: { origin: LISTED } }),
    ];
    expect(answers.map((answer) => answer.status)).toEqual([200, 200, 401, 200, 401]);
    for (const answer of answers) {
      expect(corsOf(answer.headers)).toEqual({
        "access-control-allow-origin": LISTED,
        "access-control-allow-credentials": "true",
        "access-control-expose-headers": "Retry-After, X-Request-Id",
      });
      expect(answer.headers.vary).toBe("Origin");
    }
  });

  it("carries them on a streaming answer, written by hand", async () => {
    const stream = await openStream(app.url, "plugin/probe/words", { viewer, headers: { origin: LISTED } });
    await stream.finished;
    expect(corsOf(stream.headers)).toMatchObject({ "access-control-allow-origin": LISTED, "access-control-allow-credentials": "true" });
    expect(stream.records.at(-1)).toMatchObject({ done: true });
  });

  it("replaces the upstream's own CORS headers with its own, and keeps the upstream's Vary beside Origin", async () => {
    const listed = await send(app.url, "/proxy/up/cors-upstream", { viewer, headers: { origin: LISTED } });
    expect(corsOf(listed.headers)).toEqual({
      "access-control-allow-origin": LISTED,
      "access-control-allow-credentials": "true",
      "access-control-expose-headers": "Retry-After, X-Request-Id",
    });
    expect(listed.headers.vary).toBe("Origin, Accept-Language");
    const sameOrigin = await send(app.url, "/proxy/up/cors-upstream", { viewer });
    expect(corsOf(sameOrigin.headers)).toEqual({});
  });

  it("forwards a listed origin's real OPTIONS request, which names no requested method", async () => {
    const answer = await send(app.url, "/proxy/up/options-call", { method: "OPTIONS", viewer, headers: { origin: LISTED } });
    expect(answer.status).toBe(200);
    expect(answer.json).toMatchObject({ method: "OPTIONS", url: "/options-call" });
    expect(answer.headers["access-control-allow-origin"]).toBe(LISTED);
  });

  it("gives an unlisted origin no CORS header at all, and leaves its preflights to the routes", async () => {
    const rpcPreflight = await preflight(app.url, "/__rpc/plugin/probe/hello", UNLISTED);
    const proxyPreflight = await preflight(app.url, "/proxy/up/x", UNLISTED);
    expect([rpcPreflight.status, rpcPreflight.json?.code]).toEqual([405, "RPC_METHOD_NOT_ALLOWED"]);
    expect([proxyPreflight.status, proxyPreflight.json?.code]).toEqual([401, "PROXY_NO_SESSION"]);
    const call = await send(app.url, "/__rpc/plugin/probe/hello", { method: "POST", viewer, headers: { origin: UNLISTED, "content-type": "application/json" }, body: "{}" });
    // The origin check refuses its session-bound calls as before.
    expect([call.status, call.json?.code]).toEqual([403, "RPC_BAD_ORIGIN"]);
    const open = await send(app.url, "/__rpc/plugin/probe/open", { method: "POST", headers: { origin: UNLISTED, "content-type": "application/json" }, body: "{}" });
    expect(open.status).toBe(200);
    for (const answer of [rpcPreflight, proxyPreflight, call, open]) {
      expect(corsOf(answer.headers)).toEqual({});
      expect(answer.headers.vary).toBe("Origin");
    }
  });

  it("matches origins exactly: scheme, host and port", async () => {
    for (const origin of ["http://viewer.example", "https://viewer.example:8443", "https://sub.viewer.example", "null", `${LISTED}/`]) {
      const answer = await preflight(app.url, "/__rpc/plugin/probe/hello", origin);
      expect([origin, answer.headers["access-control-allow-origin"]]).toEqual([origin, undefined]);
    }
  });

  it("adds CORS to no other route", async () => {
    for (const path of ["/", "/big.css", "/__app/client.js", "/health"]) {
      const get = await send(app.url, path, { headers: { origin: LISTED } });
      const options = await preflight(app.url, path, LISTED, "GET");
      expect([path, corsOf(get.headers), corsOf(options.headers), options.status]).toEqual([path, {}, {}, 404]);
    }
  });
});

describe("CORS without allowed origins", () => {
  let app: TestServer;
  beforeAll(async () => {
    app = await startServer({ root: ROOT });
  });
  afterAll(() => app?.close());

  it("answers no preflight and varies on nothing", async () => {
    const answer = await preflight(app.url, "/__rpc/plugin/probe/hello", "https://viewer.example");
    expect(answer.status).toBe(405);
    expect(corsOf(answer.headers)).toEqual({});
    expect(answer.headers.vary).toBeUndefined();
  });
});
