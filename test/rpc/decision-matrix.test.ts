// docs/guides/server-methods.md "Exposing a method: authentication": every row of the decision matrix, context resolution by own
// property, mode all/any, and the legacy rpcAuth key — over real HTTP.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { join } from "node:path";
import { startServer, useServer, type TestServer } from "../helpers/server.js";
import { openViewer, rpc } from "../helpers/http.js";

const ROOT = join(import.meta.dirname, "../fixtures/gateway-app");

describe("decision matrix", () => {
  const app = useServer({ root: ROOT });

  it("public: accepted with no session, no CSRF and no verifiers", async () => {
    const answer = await rpc(app.url, "plugin/matrix/open", { body: { args: [7], contextId: "strict" } });
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({ result: { value: 7, session: null } });
  });

  it("a public method sees the viewer's session only with the CSRF header, never from the cookie alone", async () => {
    const cookieOnly = await rpc(app.url, "plugin/matrix/open", { headers: { cookie: app.viewer.cookie } });
    expect(cookieOnly.body.result.session).toBeNull();
    const crossSite = await rpc(app.url, "plugin/matrix/open", { viewer: app.viewer, headers: { "sec-fetch-site": "cross-site" } });
    expect(crossSite.body.result.session).toBeNull();
    const full = await rpc(app.url, "plugin/matrix/open", { viewer: app.viewer });
    expect(full.body.result.session).toEqual({ id: expect.any(String), createdAt: expect.any(Number) });
  });

  it("public as a function of the call context", async () => {
    const refused = await rpc(app.url, "plugin/matrix/openIfHeader");
    expect(refused.status).toBe(401);
    expect(refused.body.code).toBe("RPC_NO_SESSION");
    const allowed = await rpc(app.url, "plugin/matrix/openIfHeader", { headers: { "x-let-me-in": "yes" } });
    expect(allowed.status).toBe(200);
    expect(allowed.body.result).toBe("in");
  });

  it("session-only: refused without a session, with a bad CSRF header, accepted with both", async () => {
    const none = await rpc(app.url, "plugin/matrix/sessionOnly");
    expect([none.status, none.body.code]).toEqual([401, "RPC_NO_SESSION"]);

    const noCsrf = await rpc(app.url, "plugin/matrix/sessionOnly", { headers: { cookie: app.viewer.cookie } });
    expect([noCsrf.status, noCsrf.body.code]).toEqual([403, "RPC_BAD_CSRF"]);

    const wrongCsrf = await rpc(app.url, "plugin/matrix/sessionOnly", {
      headers: { cookie: app.viewer.cookie, "x-app-csrf": app.viewer.csrf.slice(0, -2) + "xx" },
    });
    expect([wrongCsrf.status, wrongCsrf.body.code]).toEqual([403, "RPC_BAD_CSRF"]);

    const forged = await rpc(app.url, "plugin/matrix/sessionOnly", {
      headers: { cookie: app.viewer.cookie.replace(/.$/, (c) => (c === "A" ? "B" : "A")), "x-app-csrf": app.viewer.csrf },
    });
    expect([forged.status, forged.body.code]).toEqual([401, "RPC_NO_SESSION"]);

    const ok = await rpc(app.url, "plugin/matrix/sessionOnly", { viewer: app.viewer });
    expect(ok.status).toBe(200);
    expect(typeof ok.body.result.session).toBe("string");
  });

  it("session-required with a verifier context: session, CSRF and the verifiers must all pass", async () => {
    const noToken = await rpc(app.url, "plugin/matrix/sessionOnly", { viewer: app.viewer, body: { contextId: "strict" } });
    expect([noToken.status, noToken.body.code]).toEqual([401, "RPC_AUTH_FAILED"]);
    const withToken = await rpc(app.url, "plugin/matrix/sessionOnly", {
      viewer: app.viewer,
      body: { contextId: "strict" },
      headers: { "x-token": "t0k" },
    });
    expect(withToken.status).toBe(200);
    expect(withToken.body.result.user).toEqual({ sub: "token-user" });
    const tokenNoSession = await rpc(app.url, "plugin/matrix/sessionOnly", { body: { contextId: "strict" }, headers: { "x-token": "t0k" } });
    expect(tokenNoSession.body.code).toBe("RPC_NO_SESSION");
  });

  it("verifier-only: no session needed, the context's verifiers decide", async () => {
    const pass = await rpc(app.url, "plugin/matrix/verifierOnly", { body: { contextId: "strict" }, headers: { "x-token": "t0k" } });
    expect(pass.status).toBe(200);
    expect(pass.body.result).toEqual({ user: { sub: "token-user" }, session: null });
    const fail = await rpc(app.url, "plugin/matrix/verifierOnly", { body: { contextId: "strict" }, headers: { "x-token": "nope" } });
    expect([fail.status, fail.body.code]).toEqual([401, "RPC_AUTH_FAILED"]);
  });

  it("a failing verifier's reason stays in the log, never in the answer", async () => {
    const fail = await rpc(app.url, "plugin/matrix/verifierOnly", { body: { contextId: "both" }, headers: { "x-token": "t0k" } });
    expect(fail.body.code).toBe("RPC_AUTH_FAILED");
    expect(JSON.stringify(fail.body)).not.toContain("secret reason");
    expect(app.logs.text()).toContain("secret reason");
  });

  it("mode any passes when one verifier passes; mode all needs every one", async () => {
    const any = await rpc(app.url, "plugin/matrix/verifierOnly", { body: { contextId: "either" }, headers: { "x-token": "t0k" } });
    expect(any.status).toBe(200);
    const anyFail = await rpc(app.url, "plugin/matrix/verifierOnly", { body: { contextId: "either" } });
    expect(anyFail.body.code).toBe("RPC_AUTH_FAILED");
    const all = await rpc(app.url, "plugin/matrix/verifierOnly", { body: { contextId: "both" }, headers: { "x-token": "t0k" } });
    expect(all.body.code).toBe("RPC_AUTH_FAILED");
  });

  it("requireSession false with { enabled: false } is the operator's explicit opt-out: accepted", async () => {
    const answer = await rpc(app.url, "plugin/matrix/verifierOnly", { body: { contextId: "optout" } });
    expect(answer.status).toBe(200);
    expect(answer.body.result).toEqual({ user: null, session: null });
  });

  it("requireSession false with an empty context is refused with RPC_AUTH_NO_VERIFIERS", async () => {
    const explicit = await rpc(app.url, "plugin/matrix/verifierOnly", { body: { contextId: "empty" } });
    expect([explicit.status, explicit.body.code]).toEqual([401, "RPC_AUTH_NO_VERIFIERS"]);
    // An unknown context falls back to `default`, which is {}: not public access.
    const fallback = await rpc(app.url, "plugin/matrix/verifierOnly", { body: { contextId: "no-such-context" } });
    expect(fallback.body.code).toBe("RPC_AUTH_NO_VERIFIERS");
    const absent = await rpc(app.url, "plugin/matrix/verifierOnly");
    expect(absent.body.code).toBe("RPC_AUTH_NO_VERIFIERS");
  });

  it("default: {} with requireSession true means session-only", async () => {
    const answer = await rpc(app.url, "plugin/matrix/sessionOnly", { viewer: app.viewer, body: { contextId: "nope" } });
    expect(answer.status).toBe(200);
  });

  for (const contextId of ["__proto__", "constructor", "toString", "hasOwnProperty", "valueOf"]) {
    it(`contextId ${contextId} resolves by own property only (falls back to default)`, async () => {
      const answer = await rpc(app.url, "plugin/matrix/verifierOnly", { rawBody: JSON.stringify({ contextId }) });
      expect([answer.status, answer.body.code]).toEqual([401, "RPC_AUTH_NO_VERIFIERS"]);
    });
  }

  it("logs a one-shot warning at start for each method with requireSession: false", () => {
    const warnings = app.logs.lines.filter((line) => String(line.msg).includes("requireSession: false"));
    expect(warnings.map((line) => line.method).sort()).toEqual(["checksSignal", "quickVerifierOnly", "verifierOnly"]);
  });

  it("a verifier that never settles is bounded by the method's timeoutMs: 504 RPC_TIMEOUT, one rpc.timeout event", async () => {
    const started = Date.now();
    const answer = await rpc(app.url, "plugin/matrix/quickVerifierOnly", { body: { contextId: "hanging" } });
    expect([answer.status, answer.body.code, answer.body.details]).toEqual([504, "RPC_TIMEOUT", { timeoutMs: 200 }]);
    expect(Date.now() - started).toBeLessThan(5000);
    const events = app.logs.lines.filter((line) => line.method === "quickVerifierOnly" && typeof line.event === "string");
    expect(events.map((line) => line.event)).toEqual(["rpc.timeout"]);
  });

  it("an auth.public function that never settles is bounded the same way", async () => {
    const answer = await rpc(app.url, "plugin/matrix/hangingPublic");
    expect([answer.status, answer.body.code, answer.body.details]).toEqual([504, "RPC_TIMEOUT", { timeoutMs: 200 }]);
  });
});

describe("decision matrix without a default context", () => {
  let app: TestServer;
  beforeAll(async () => {
    app = await startServer({
      root: ROOT,
      config: {
        server: { secure: { rpcAuth: { strict: { verifiers: { token: { expected: "t0k" } } } } } },
      },
    });
  });
  afterAll(() => app.close());

  it("the legacy key rpcAuth configures verifier contexts", async () => {
    const answer = await rpc(app.url, "plugin/matrix/verifierOnly", { body: { contextId: "strict" }, headers: { "x-token": "t0k" } });
    expect(answer.status).toBe(200);
  });

  it("no entry and no default: RPC_AUTH_NOT_CONFIGURED", async () => {
    for (const contextId of [undefined, "missing", "__proto__", "constructor"]) {
      const answer = await rpc(app.url, "plugin/matrix/verifierOnly", { rawBody: JSON.stringify({ contextId }) });
      expect([answer.status, answer.body.code]).toEqual([401, "RPC_AUTH_NOT_CONFIGURED"]);
    }
  });
});

describe("decision matrix with no verifier configuration at all", () => {
  let app: TestServer;
  beforeAll(async () => {
    app = await startServer({ root: ROOT, config: {} });
  });
  afterAll(() => app.close());

  it("verifier-only methods are refused with RPC_AUTH_NOT_CONFIGURED, session methods still work", async () => {
    const answer = await rpc(app.url, "plugin/matrix/verifierOnly");
    expect(answer.body.code).toBe("RPC_AUTH_NOT_CONFIGURED");
    const viewer = await openViewer(app.url);
    expect((await rpc(app.url, "plugin/matrix/sessionOnly", { viewer })).status).toBe(200);
  });
});
