// The RPC gateway: routing, the order of checks, every non-runtime row of the docs/reference/error-codes.md
// "Error codes" table with malformed input, ctx fields, RpcError, undefined → null, generic 500s.
// (The origin check: test/auth/origin.test.ts; its log events: test/log/events.test.ts.)
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Agent, request as httpRequest } from "node:http";
import { join } from "node:path";
import { startServer, type TestServer } from "../helpers/server.js";
import { openViewer, rawRequest, rpc, type Viewer } from "../helpers/http.js";

const ROOT = join(import.meta.dirname, "../fixtures/gateway-app");

describe("RPC gateway", () => {
  let app: TestServer;
  let viewer: Viewer;
  beforeAll(async () => {
    app = await startServer({ root: ROOT });
    viewer = await openViewer(app.url);
  });
  afterAll(async () => {
    await app.close();
    // No request of this file may have polluted Object.prototype.
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it("answers { result } with the method's return value and passes args after ctx", async () => {
    const answer = await rpc(app.url, "plugin/matrix/echo", {
      viewer,
      body: { args: [1, "two", { three: 3 }], viewerId: "viewer-9", contextId: "nope" },
    });
    expect(answer.status).toBe(200);
    expect(answer.headers.get("content-type")).toMatch(/^application\/json/);
    const result = answer.body.result;
    expect(result).toMatchObject({
      args: [1, "two", { three: 3 }],
      kind: "plugin",
      id: "matrix",
      method: "echo",
      viewerId: "viewer-9",
      contextId: "nope",
      config: { flavour: "plain" },
      hasReq: true,
      hasRes: true,
      hasSignal: true,
      hasLog: true,
      user: null,
    });
    expect(result.session.id).toEqual(expect.any(String));
    expect(result.requestId).toEqual(expect.any(String));
  });

  it("calls the method with ctx only when args is omitted, and answers undefined as null", async () => {
    const echo = await rpc(app.url, "plugin/matrix/echo", { viewer, body: {} });
    expect(echo.body.result.args).toEqual([]);
    const empty = await rpc(app.url, "plugin/matrix/nothing", { viewer, rawBody: "" });
    expect(empty.status).toBe(200);
    expect(empty.body).toEqual({ result: null });
  });

  it("loads .ts server files in subfolders with no build step", async () => {
    const answer = await rpc(app.url, "plugin/matrix/add", { viewer, body: { args: [2, 3] } });
    expect(answer.body).toEqual({ result: { total: 5 } });
  });

  it("serves modules under /__rpc/module", async () => {
    const answer = await rpc(app.url, "module/tools/version", { viewer });
    expect(answer.body).toEqual({ result: "tools-1" });
    const wrongKind = await rpc(app.url, "plugin/tools/version", { viewer });
    expect(wrongKind.body.code).toBe("RPC_UNKNOWN_TARGET");
  });

  it("refuses other verbs with 405 RPC_METHOD_NOT_ALLOWED and an Allow header, before anything else", async () => {
    for (const method of ["GET", "PUT", "DELETE", "PATCH"]) {
      const answer = await rpc(app.url, "plugin/nope/nope", { method });
      expect([answer.status, answer.body.code]).toEqual([405, "RPC_METHOD_NOT_ALLOWED"]);
      expect(answer.headers.get("allow")).toBe("POST");
    }
  });

  it("refuses TRACE and QUERY the same way, logging one event each", async () => {
    for (const method of ["TRACE", "QUERY"]) {
      const before = app.logs.events().length;
      const answer = await rawRequest(app.url, { path: "/__rpc/plugin/matrix/echo", method });
      expect([method, answer.status, JSON.parse(answer.body).code]).toEqual([method, 405, "RPC_METHOD_NOT_ALLOWED"]);
      expect(app.logs.events().length).toBe(before + 1);
    }
  });

  it("answers a malformed Content-Type in the RPC shape, with one event", async () => {
    const before = app.logs.events().length;
    const answer = await rawRequest(app.url, {
      path: "/__rpc/plugin/matrix/echo",
      headers: { cookie: viewer.cookie, "x-app-csrf": viewer.csrf, "content-type": ";;", "content-length": 2 },
      chunks: ["{}"],
    });
    expect(answer.status).toBe(400);
    expect(JSON.parse(answer.body)).toMatchObject({ code: "RPC_BAD_REQUEST" });
    const events = app.logs.events().slice(before);
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ event: "rpc.rejected", status: 400, method: "echo" });
  });

  it("closes the connection instead of draining a body it refused to read", async () => {
    const answer = await rawRequest(app.url, {
      path: "/__rpc/plugin/matrix/sessionOnly",
      headers: { "content-type": "application/json", "content-length": 200_000_000 },
      chunks: ["{"],
      endBody: false,
    });
    expect(answer.status).toBe(401);
    expect(answer.headers.connection).toBe("close");
  });

  it("answers 404 RPC_UNKNOWN_TARGET for unknown kinds and ids, checked before the session", async () => {
    for (const path of ["plugin/nope/x", "widget/matrix/echo", "plugin/__proto__/x", "module/constructor/x", "server/core/getStatus", "plugin/matrix", "plugin/matrix/echo/extra"]) {
      const answer = await rpc(app.url, path);
      expect([path, answer.status, answer.body.code]).toEqual([path, 404, "RPC_UNKNOWN_TARGET"]);
    }
  });

  it("answers 404 RPC_UNKNOWN_METHOD for unknown names, policy, data exports and inherited names", async () => {
    for (const method of ["nope", "policy", "notAMethod", "toString", "constructor", "__proto__", "hasOwnProperty", "valueOf", "fromNodeModules", "fromDotFolder", "register"]) {
      const answer = await rpc(app.url, `plugin/matrix/${method}`, { viewer });
      expect([method, answer.status, answer.body.code]).toEqual([method, 404, "RPC_UNKNOWN_METHOD"]);
      expect(answer.body).toEqual({ error: expect.any(String), code: "RPC_UNKNOWN_METHOD", details: {} });
    }
  });

  it("treats names of any length alike: an unknown long method is RPC_UNKNOWN_METHOD, a long id RPC_UNKNOWN_TARGET", async () => {
    const long = "aMethodWhoseNameIsLongerThanAHundredCharactersWhichTheHttpRouterWouldNotMatchAsAParameterOnItsOwnAtAll";
    expect(long.length).toBeGreaterThan(100);
    const real = await rpc(app.url, `plugin/matrix/${long}`, { viewer });
    expect([real.status, real.body]).toEqual([200, { result: "long names work" }]);
    // The same name with a percent-encoded letter, decoded as the router decodes a parameter.
    expect((await rpc(app.url, `plugin/matrix/%61${long.slice(1)}`, { viewer })).body).toEqual({ result: "long names work" });

    const cases: Array<[string, string, string, Record<string, string>]> = [];
    for (const length of [101, 150, 5_000]) {
      const name = "m".repeat(length);
      cases.push([`plugin/matrix/${name}`, "RPC_UNKNOWN_METHOD", "method", { kind: "plugin", id: "matrix", method: name }]);
      const id = "p".repeat(length);
      cases.push([`plugin/${id}/echo`, "RPC_UNKNOWN_TARGET", "id", { kind: "plugin", id, method: "echo" }]);
    }
    for (const [path, code, field, logged] of cases) {
      const answer = await rpc(app.url, path, { viewer });
      expect([path.length, answer.status, answer.body]).toEqual([path.length, 404, { error: expect.any(String), code, details: {} }]);
      // Exactly one event for the call, naming what was asked for.
      const events = app.logs.events().filter((line) => line[field] === logged[field]);
      expect(events).toHaveLength(1);
      expect(events[0]).toMatchObject({ event: "rpc.rejected", status: 404, code, ...logged });
    }
  });

  describe("body shape", () => {
    const cases: Array<[string, string]> = [
      ["malformed JSON", "{\"args\": [1,"],
      ["an array body", "[1,2,3]"],
      ["a string body", "\"hello\""],
      ["null", "null"],
      ["args not an array", "{\"args\": {\"0\": 1}}"],
      ["args a string", "{\"args\": \"1,2\"}"],
      ["a non-string contextId", "{\"contextId\": 5}"],
      ["a non-string viewerId", "{\"viewerId\": {\"id\": 1}}"],
      ["__proto__ at the top", "{\"__proto__\": {\"polluted\": true}, \"args\": []}"],
      ["__proto__ inside args", "{\"args\": [{\"__proto__\": {\"polluted\": true}}]}"],
      ["constructor.prototype inside args", "{\"args\": [{\"constructor\": {\"prototype\": {\"polluted\": true}}}]}"],
    ];
    for (const [name, rawBody] of cases) {
      it(`refuses ${name} with 400 RPC_BAD_REQUEST`, async () => {
        const answer = await rpc(app.url, "plugin/matrix/echo", { viewer, rawBody });
        expect([answer.status, answer.body.code]).toEqual([400, "RPC_BAD_REQUEST"]);
        expect(answer.body.details).toEqual({ reason: expect.any(String) });
      });
    }

    it("refuses JSON nested 100 000 deep with 400 before the method runs (docs/guides/server-methods.md \"Arguments and nesting\")", async () => {
      const rawBody = `{"args":[${"[".repeat(100_000)}${"]".repeat(100_000)}]}`;
      for (const method of ["deep", "echo"]) {
        const answer = await rpc(app.url, `plugin/matrix/${method}`, { viewer, rawBody });
        expect([method, answer.status, answer.body.code, answer.body.details]).toEqual([method, 400, "RPC_BAD_REQUEST", { reason: "too-deep", limit: 64 }]);
      }
    });
  });

  it("answers an RpcError thrown from another copy of the package with its own status and code", async () => {
    const answer = await rpc(app.url, "plugin/matrix/foreignRpcError", { viewer });
    expect(answer.status).toBe(418);
    expect(answer.body).toEqual({ error: "short and stout", code: "TEAPOT", details: { spout: true } });
  });

  describe("body size", () => {
    it("keeps the connection for a refused call with a small body: the next call reuses it", async () => {
      // Closing after every 401 would make each refusal pay for a new connection.
      const agent = new Agent({ keepAlive: true, maxSockets: 1 });
      const send = () =>
        new Promise<{ status: number; reused: boolean; connection: string | undefined }>((resolve, reject) => {
          const target = new URL(app.url);
          const req = httpRequest(
            { host: target.hostname, port: target.port, path: "/__rpc/plugin/matrix/echo", method: "POST", agent, headers: { "content-type": "application/json" } },
            (res) => {
              res.resume();
              res.on("end", () => resolve({ status: res.statusCode!, reused: req.reusedSocket, connection: res.headers.connection }));
            },
          );
          req.on("error", reject);
          req.end(JSON.stringify({ args: [{ message: "refused: no session" }] }));
        });
      // Node warns once an emitter has more than 10 listeners of one event: refusals on one
      // socket must not leave one behind each.
      const warnings: Error[] = [];
      const onWarning = (warning: Error) => warnings.push(warning);
      process.on("warning", onWarning);
      try {
        const first = await send();
        const second = await send();
        expect(first).toEqual({ status: 401, reused: false, connection: "keep-alive" });
        expect(second).toEqual({ status: 401, reused: true, connection: "keep-alive" });
        for (let i = 0; i < 30; i++) expect(await send()).toEqual({ status: 401, reused: true, connection: "keep-alive" });
        await new Promise((resolve) => setImmediate(resolve));
        expect(warnings.filter((warning) => warning.name === "MaxListenersExceededWarning")).toEqual([]);
      } finally {
        process.off("warning", onWarning);
        agent.destroy();
      }
    });

    it("answers 413 from Content-Length alone, without waiting for the body", async () => {
      const answer = await rawRequest(app.url, {
        path: "/__rpc/plugin/matrix/small",
        headers: { cookie: viewer.cookie, "x-app-csrf": viewer.csrf, "content-type": "application/json", "content-length": 10_000 },
        chunks: ["{\"args\":"],
        endBody: false,
      });
      expect(answer.status).toBe(413);
      expect(JSON.parse(answer.body)).toMatchObject({ code: "RPC_PAYLOAD_TOO_LARGE", details: { limit: 64 } });
      expect(answer.headers.connection).toBe("close");
    });

    it("cuts a chunked body off at the limit", async () => {
      const answer = await rawRequest(app.url, {
        path: "/__rpc/plugin/matrix/small",
        headers: { cookie: viewer.cookie, "x-app-csrf": viewer.csrf, "content-type": "application/json", "transfer-encoding": "chunked" },
        chunks: ["{\"args\":[\"", "x".repeat(50), "x".repeat(50), "\"]}"],
      });
      expect(answer.status).toBe(413);
      expect(JSON.parse(answer.body).code).toBe("RPC_PAYLOAD_TOO_LARGE");
    });

    it("accepts a body just under the method's limit", async () => {
      const answer = await rpc(app.url, "plugin/matrix/small", { viewer, body: { args: ["x".repeat(40)] } });
      expect(answer.body).toEqual({ result: 40 });
    });

    it("applies the default 1 MiB limit to methods without their own", async () => {
      const big = await rpc(app.url, "plugin/matrix/echo", { viewer, body: { args: ["x".repeat(1024 * 1024)] } });
      expect([big.status, big.body.code]).toEqual([413, "RPC_PAYLOAD_TOO_LARGE"]);
    });

    it("checks the session before the size: an anonymous oversized call is a 401", async () => {
      const answer = await rpc(app.url, "plugin/matrix/small", { body: { args: ["x".repeat(500)] } });
      expect(answer.body.code).toBe("RPC_NO_SESSION");
    });
  });

  describe("errors from methods", () => {
    it("answers an RpcError with its status, code, message and details", async () => {
      const answer = await rpc(app.url, "plugin/matrix/conflict", { viewer });
      expect(answer.status).toBe(409);
      expect(answer.body).toEqual({ error: "That note changed meanwhile", code: "NOTES_CONFLICT", details: { version: 3 } });
    });

    it("hides an unexpected error's message outside dev mode, with the request id in details", async () => {
      const answer = await rpc(app.url, "plugin/matrix/boom", { viewer });
      expect(answer.status).toBe(500);
      expect(answer.body).toEqual({ error: "Internal server error", code: "RPC_INTERNAL_ERROR", details: { requestId: expect.any(String) } });
      const events = app.logs.forRequest(answer.body.details.requestId);
      expect(events).toHaveLength(1);
      expect(events[0]).toMatchObject({ event: "rpc.error", status: 500, code: "RPC_INTERNAL_ERROR" });
      expect(JSON.stringify(events[0])).toContain("secret internals");
    });

    it("answers a result that is not JSON-serialisable with 500 RPC_BAD_RESULT, keeping the reason in the log", async () => {
      for (const method of ["bigint", "badToJson"]) {
        const answer = await rpc(app.url, `plugin/matrix/${method}`, { viewer });
        expect([answer.status, answer.body.code]).toEqual([500, "RPC_BAD_RESULT"]);
        expect(answer.body.details).toEqual({ requestId: expect.any(String) });
        expect(JSON.stringify(answer.body)).not.toMatch(/hunter2|BigInt/);
        const [event] = app.logs.forRequest(answer.body.details.requestId);
        expect(JSON.stringify(event)).toMatch(/hunter2|BigInt/);
      }
    });

    it("answers an RpcError whose details cannot be serialised with its status and code", async () => {
      const answer = await rpc(app.url, "plugin/matrix/throwsBadDetails", { viewer });
      expect(answer.status).toBe(418);
      expect(answer.body).toEqual({ error: "odd details", code: "TEAPOT", details: {} });
    });
  });
});

describe("RPC gateway in dev mode", () => {
  let app: TestServer;
  beforeAll(async () => {
    app = await startServer({ root: ROOT, dev: true });
  });
  afterAll(() => app.close());

  it("shows an unexpected error's own message", async () => {
    const viewer = await openViewer(app.url);
    const answer = await rpc(app.url, "plugin/matrix/boom", { viewer });
    expect(answer.body.code).toBe("RPC_INTERNAL_ERROR");
    expect(answer.body.error).toContain("secret internals");
  });
});
