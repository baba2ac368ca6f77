// docs/reference/log-events.md: every answer carries X-Request-Id — a well-formed incoming one, else one made
// here — and that id is the reqId of the request's log events, ctx.requestId (inline and
// isolated) and the X-Request-Id the proxy sends upstream. A malformed id is never echoed.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { join } from "node:path";
import { Client } from "undici";
import { startServer, type TestServer } from "../helpers/server.js";
import { closedPort, openViewer, send, type RawAnswer, type Viewer } from "../helpers/http.js";
import { TestUpstream } from "../helpers/upstream.js";

const TRACE_APP = join(import.meta.dirname, "../fixtures/trace-app");
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const MALFORMED = ["", "x".repeat(129), "bad id", "two, ids", "<script>alert(1)</script>", "id/with/slashes", "ünïcode-id", "id;k=v"];

describe("X-Request-Id", () => {
  let upstream: TestUpstream;
  let app: TestServer;
  let viewer: Viewer;
  beforeAll(async () => {
    upstream = await new TestUpstream().start();
    upstream.routes.set("/own-id", (_req, res) => {
      res.writeHead(200, { "x-request-id": "chosen-by-upstream", "content-type": "text/plain" });
      res.end("upstream");
    });
    const down = await closedPort();
    app = await startServer({
      root: TRACE_APP,
      config: { server: { secure: { proxies: { up: { baseUrl: upstream.origin }, down: { baseUrl: `http://127.0.0.1:${down}` } } } } },
    });
    viewer = await openViewer(app.url);
  });
  afterAll(async () => {
    await app.close();
    await upstream.close();
  });

  const rpcHeaders = (viewer: Viewer | null, extra: Record<string, string> = {}) => ({
    "content-type": "application/json",
    ...(viewer ? { cookie: viewer.cookie, "x-app-csrf": viewer.csrf } : {}),
    ...extra,
  });

  /** One request of every kind the server answers, each as a name and a send(). */
  function everyKind(): Array<[string, number, (headers: Record<string, string>) => Promise<RawAnswer>]> {
    const post = (path: string, extra: Record<string, string> = {}, withViewer: Viewer | null = viewer) => (headers: Record<string, string>) =>
      send(app.url, path, { method: "POST", headers: { ...rpcHeaders(withViewer, extra), ...headers }, body: JSON.stringify({ args: [] }) });
    const get = (path: string, withViewer: Viewer | null = viewer) => (headers: Record<string, string>) =>
      send(app.url, path, { headers: { ...(withViewer ? { cookie: withViewer.cookie, "x-app-csrf": withViewer.csrf } : {}), ...headers } });
    return [
      ["RPC answer", 200, post("/__rpc/plugin/trace/show")],
      ["RPC stream", 200, post("/__rpc/plugin/trace/stream", { "x-app-rpc-stream": "1" })],
      ["RPC method error", 500, post("/__rpc/plugin/trace/fail")],
      ["RPC unknown method", 404, post("/__rpc/plugin/trace/nope")],
      ["RPC without a session", 401, post("/__rpc/plugin/trace/show", {}, null)],
      ["RPC wrong verb", 405, get("/__rpc/plugin/trace/show")],
      ["RPC bad path", 404, post("/__rpc/plugin")],
      ["proxy answer", 200, get("/proxy/up/echo")],
      ["proxy answer with the upstream's own id", 200, get("/proxy/up/own-id")],
      ["proxy without a session", 401, get("/proxy/up/echo", null)],
      ["proxy unknown alias", 404, get("/proxy/nope/x")],
      ["proxy upstream down", 502, get("/proxy/down/x")],
      ["viewer page", 200, get("/", null)],
      ["static file", 200, get("/app.js", null)],
      ["client script", 200, get("/__app/client.js", null)],
      ["missing file", 404, get("/missing.txt", null)],
      ["undecodable URL", 400, get("/%E0%A4%A", null)],
      ["health", 200, get("/health", null)],
    ];
  }

  it("answers a well-formed incoming id on every kind of answer", async () => {
    let n = 0;
    for (const [name, status, request] of everyKind()) {
      const id = `req-${(n += 1)}:a.b_c`;
      const answer = await request({ "x-request-id": id });
      expect([name, answer.status, answer.headers["x-request-id"]]).toEqual([name, status, id]);
    }
  });

  it("makes an id for a request without one, and for a malformed one, which is never echoed", async () => {
    for (const [name, status, request] of everyKind()) {
      const none = await request({});
      expect([name, none.status, none.headers["x-request-id"]]).toEqual([name, status, expect.stringMatching(UUID)]);
      for (const bad of MALFORMED) {
        const answer = await request({ "x-request-id": bad });
        expect([name, bad, answer.status, answer.headers["x-request-id"]]).toEqual([name, bad, status, expect.stringMatching(UUID)]);
        if (bad !== "") expect([name, bad, answer.body.includes(bad) || JSON.stringify(answer.headers).includes(bad)]).toEqual([name, bad, false]);
      }
    }
  });

  it("is the reqId of the call's log event and of the method's own lines, and ctx.requestId inline, isolated and streaming", async () => {
    const show = await send(app.url, "/__rpc/plugin/trace/show", { method: "POST", headers: rpcHeaders(viewer, { "x-request-id": "call-inline" }), body: "{}" });
    expect(show.json.result.requestId).toBe("call-inline");
    const isolated = await send(app.url, "/__rpc/plugin/trace/isolated", { method: "POST", headers: rpcHeaders(viewer, { "x-request-id": "call-isolated" }), body: "{}" });
    expect(isolated.json.result.requestId).toBe("call-isolated");
    const stream = await send(app.url, "/__rpc/plugin/trace/stream", {
      method: "POST",
      headers: rpcHeaders(viewer, { "x-request-id": "call-stream", "x-app-rpc-stream": "1" }),
      body: "{}",
    });
    expect(JSON.parse(stream.body.split("\n")[0]!)).toEqual({ event: { requestId: "call-stream" } });
    const logged = await send(app.url, "/__rpc/plugin/trace/logs", { method: "POST", headers: rpcHeaders(viewer), body: "{}" });
    const made = logged.headers["x-request-id"] as string;
    expect(made).toMatch(UUID);
    expect(logged.json.result).toBe(made);

    for (const id of ["call-inline", "call-isolated", "call-stream"]) {
      expect(app.logs.forRequest(id).map((line) => line.event)).toEqual(["rpc.complete"]);
    }
    expect(app.logs.forRequest(made).map((line) => line.event)).toEqual(["method.note", "rpc.complete"]);
  });

  it("is the reqId of a proxied request's log event and the X-Request-Id the upstream receives", async () => {
    const answer = await send(app.url, "/proxy/up/echo", { viewer, headers: { "x-request-id": "proxied-1" } });
    expect(answer.json.headers["x-request-id"]).toBe("proxied-1");
    expect(app.logs.forRequest("proxied-1").map((line) => line.event)).toEqual(["proxy.complete"]);
    for (const bad of MALFORMED) {
      const replaced = await send(app.url, "/proxy/up/echo", { viewer, headers: { "x-request-id": bad } });
      const sent = replaced.json.headers["x-request-id"];
      expect([bad, sent]).toEqual([bad, replaced.headers["x-request-id"]]);
      expect(sent).toMatch(UUID);
    }
  });

  it("is the reqId of a refused proxy request's log event", async () => {
    const answer = await send(app.url, "/proxy/nope/x", { viewer, headers: { "x-request-id": "proxied-2" } });
    expect(answer.status).toBe(404);
    expect(app.logs.forRequest("proxied-2")).toEqual([expect.objectContaining({ event: "proxy.rejected", code: "PROXY_UNKNOWN_ALIAS" })]);
  });
});

describe("X-Request-Id with server.requestId.trustIncoming false", () => {
  let app: TestServer;
  beforeAll(async () => {
    app = await startServer({ root: TRACE_APP, config: { server: { requestId: { trustIncoming: false } } } });
  });
  afterAll(() => app.close());

  it("makes a new id for every request, whatever it brings", async () => {
    const viewer = await openViewer(app.url);
    const answer = await send(app.url, "/__rpc/plugin/trace/show", {
      method: "POST",
      headers: { "content-type": "application/json", cookie: viewer.cookie, "x-app-csrf": viewer.csrf, "x-request-id": "from-the-client" },
      body: "{}",
    });
    const id = answer.headers["x-request-id"] as string;
    expect(id).toMatch(UUID);
    expect(answer.json.result.requestId).toBe(id);
    expect(app.logs.forRequest("from-the-client")).toEqual([]);
    expect(app.logs.forRequest(id).map((line) => line.event)).toEqual(["rpc.complete"]);
    const page = await send(app.url, "/", { headers: { "x-request-id": "from-the-client" } });
    expect(page.headers["x-request-id"]).toMatch(UUID);
  });
});

describe("X-Request-Id while the server drains", () => {
  it("is on the 503 answered to a request on an open keep-alive connection", async () => {
    const app = await startServer({ root: TRACE_APP });
    const viewer = await openViewer(app.url);
    const calls = new Client(app.url);
    const other = new Client(app.url);
    try {
      const first = await other.request({ path: "/app.js", method: "GET" });
      await first.body.dump();
      const headers = { cookie: viewer.cookie, "x-app-csrf": viewer.csrf, "content-type": "application/json" };
      const slow = calls.request({ path: "/__rpc/plugin/trace/slow", method: "POST", headers, body: JSON.stringify({ args: [300] }) });
      // The method is running (it runs in this process) before the server starts closing.
      const started = globalThis as { traceSlowStarted?: number };
      while (!started.traceSlowStarted) await new Promise((resolve) => setTimeout(resolve, 5));
      const closed = app.close();
      const refused = await other.request({ path: "/app.js", method: "GET", headers: { "x-request-id": "during-drain" } });
      expect([refused.statusCode, refused.headers["x-request-id"]]).toEqual([503, "during-drain"]);
      expect((await refused.body.json()) as unknown).toMatchObject({ code: "SERVICE_UNAVAILABLE" });
      const answered = await slow;
      expect(answered.statusCode).toBe(200);
      await answered.body.dump();
      await closed;
    } finally {
      await Promise.all([calls.close().catch(() => {}), other.close().catch(() => {})]);
    }
  });
});
