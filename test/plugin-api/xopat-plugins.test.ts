// docs/guides/xopat.md: an app written the way xOpat's plugins are (an OIDC-style
// module with a boot hook, a route and verifiers with settings; a chat-style module whose .ts
// files import each other without extensions; a provider plugin reading its two-tier secure
// config and calling the module through importServerExport), over real HTTP.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startServer, type TestServer } from "../helpers/server.js";
import { openViewer, rpc, send, type Viewer } from "../helpers/http.js";
import { TestUpstream } from "../helpers/upstream.js";
import { openStream } from "../helpers/stream.js";

const ROOT = join(import.meta.dirname, "../fixtures/xopat-app");
const IDP_TOKEN = "idp-token-for-the-verifier-tests";
const CLIENT_SECRET = "oidc-client-secret-never-shown";

let app: TestServer;
let viewer: Viewer;
let upstream: TestUpstream;

beforeAll(async () => {
  upstream = await new TestUpstream().start();
  const config = JSON.parse(readFileSync(join(ROOT, "app.config.json"), "utf8"));
  config.server.secure.proxies.guarded.baseUrl = `${upstream.origin}/guarded`;
  app = await startServer({ root: ROOT, config, env: { IDP_TOKEN, OIDC_CLIENT_SECRET: CLIENT_SECRET } });
  viewer = await openViewer(app.url);
});

afterAll(async () => {
  await app?.close();
  await upstream?.close();
});

describe("methods written for xOpat", () => {
  it("serve only the functions their policy lists (server.rpc.expose: policy), the boot hook's included, never register", async () => {
    expect((await rpc(app.url, "module/oidc-like/listContexts", { viewer })).status).toBe(200);
    for (const path of ["module/oidc-like/internalHelper", "module/oidc-like/register", "module/chat-like/registerPersonality", "module/chat-like/chatRegistry", "module/chat-like/ensureProvider"]) {
      const answer = await rpc(app.url, path, { viewer });
      expect([path, answer.status, answer.body.code]).toEqual([path, 404, "RPC_UNKNOWN_METHOD"]);
    }
  });

  it("see their own secure block and the verifier contexts without their settings; another item's block is {}", async () => {
    const answer = await rpc(app.url, "module/oidc-like/listContexts", { viewer });
    expect(answer.body.result).toEqual({
      contexts: [{ contextId: "core", flow: "popup" }],
      trusted: ["idp"],
      verifierView: { idp: { enabled: true, mode: "all", verifiers: { "oidc-like": {} } } },
      otherItem: {},
    });
    expect(JSON.stringify(answer.body)).not.toContain(IDP_TOKEN);
  });

  it("read the two tiers merged (deployer over server.json), frozen, and call a module's export with their own ctx", async () => {
    const answer = await rpc(app.url, "plugin/provider-like/registerDefaults", { viewer });
    expect(answer.status).toBe(200);
    expect(answer.body.result).toEqual({
      provider: { id: "provider-like:deployer-model", caller: "provider-like" },
      modelsPath: "/models",
      apiKeyFromDeployer: true,
      value: "deployer-model",
      missing: "fallback",
      frozen: true,
      required: "Missing secure configuration: plugins.provider-like.providerDefaults.nothing",
      devMode: false,
      privateAddress: "SSRF_BLOCKED",
      coreSecureIsCtxSecure: true,
    });
    // The module's files share one instance of the registry: it was evaluated once, and the
    // provider the plugin registered through importServerExport is the one the RPC path lists.
    const listed = await rpc(app.url, "module/chat-like/listProviders", { viewer });
    expect(listed.body.result).toEqual({ loads: 1, providers: [{ id: "provider-like:deployer-model", label: "chat:deployer-model", hasKey: true }] });
  });

  it("accept the legacy policy forms: auth: false is public, flat runtime fields with runtime winning", async () => {
    const open = await rpc(app.url, "plugin/provider-like/publicInfo");
    expect([open.status, open.body.result]).toEqual([200, { session: null, itemId: "provider-like" }]);
    const fits = await rpc(app.url, "plugin/provider-like/tiny", { viewer, rawBody: JSON.stringify({ args: ["x".repeat(30)] }) });
    expect(fits.status).toBe(200);
    const tooBig = await rpc(app.url, "plugin/provider-like/tiny", { viewer, rawBody: JSON.stringify({ args: ["x".repeat(80)] }) });
    expect([tooBig.status, tooBig.body.code]).toEqual([413, "RPC_PAYLOAD_TOO_LARGE"]);
  });

  it("share a concurrencyKey within the module: a second sendTurn while one runs is refused at once", async () => {
    const first = rpc(app.url, "module/chat-like/sendTurn", { viewer, body: { args: [{ holdMs: 300 }] } });
    await new Promise((resolve) => setTimeout(resolve, 50));
    const second = await rpc(app.url, "module/chat-like/sendTurn", { viewer, body: { args: [{}] } });
    expect([second.status, second.body.code]).toEqual([429, "RPC_QUEUE_FULL"]);
    expect((await first).status).toBe(200);
    const status = await rpc(app.url, "module/chat-like/sendTurn", { viewer, body: { args: [{}] } });
    expect(status.status).toBe(200);
  });

  it("refuse a stream-mode mismatch with 400 before the method runs", async () => {
    const required = await rpc(app.url, "module/chat-like/sendTurnStream", { viewer });
    expect([required.status, required.body.code]).toEqual([400, "RPC_STREAM_REQUIRED"]);
    const notStreamable = await rpc(app.url, "module/chat-like/sendTurn", { viewer, headers: { "x-app-rpc-stream": "1" } });
    expect([notStreamable.status, notStreamable.body.code]).toEqual([400, "RPC_NOT_STREAMABLE"]);
  });

  it("stream deltas from a streaming method called with the stream header", async () => {
    const stream = await openStream(app.url, "module/chat-like/sendTurnStream", { viewer, args: [{ text: "two words" }] });
    await stream.finished;
    expect(stream.records.map(({ at: _at, ...record }) => record)).toEqual([
      { event: { type: "delta", text: "two" } },
      { event: { type: "delta", text: "words" } },
      { done: true, ok: true, result: { ok: true, text: "two words" } },
    ]);
  });
});

describe("verifiers registered by a boot hook, configured with settings", () => {
  it("RPC: the verifier gets its verifierConfig and sets ctx.user", async () => {
    const passed = await rpc(app.url, "module/oidc-like/whoIsCalling", { body: { args: [], contextId: "idp" }, headers: { authorization: `Bearer ${IDP_TOKEN}` } });
    expect([passed.status, passed.body.result]).toEqual([200, { user: { sub: "idp-user", secureKeys: ["rpcVerifiers"] }, contextId: "idp" }]);
    const refused = await rpc(app.url, "module/oidc-like/whoIsCalling", { body: { args: [], contextId: "idp" }, headers: { authorization: "Bearer wrong" } });
    expect([refused.status, refused.body.code]).toEqual([401, "RPC_AUTH_FAILED"]);
  });

  it("proxy: auth.verifiers as a map hands each verifier its settings; the token is not forwarded", async () => {
    const refused = await send(app.url, "/proxy/guarded/x", { viewer, headers: { authorization: "Bearer wrong" } });
    expect([refused.status, refused.json.code]).toEqual([401, "PROXY_AUTH_FAILED"]);
    const passed = await send(app.url, "/proxy/guarded/x", { viewer, headers: { authorization: `Bearer ${IDP_TOKEN}` } });
    expect(passed.status).toBe(200);
    expect(upstream.find("/guarded/x").at(-1)!.headers.authorization).toBeUndefined();
  });
});

describe("a route registered by a boot hook", () => {
  it("runs the OIDC login round trip on session data: state kept at login, tokens at the callback, the refresh token never sent", async () => {
    const own = await openViewer(app.url);
    const before = await rpc(app.url, "module/oidc-like/getToken", { viewer: own, body: { args: [{ contextId: "core" }] } });
    expect([before.status, before.body.code]).toEqual([401, "OIDC_LOGIN_REQUIRED"]);
    const login = await send(app.url, "/auth/oidc-like/login/core?returnTo=/after", { headers: { cookie: own.cookie } });
    expect(login.status).toBe(302);
    const state = new URL(login.headers.location as string).searchParams.get("state")!;
    // Another viewer cannot finish this viewer's login.
    const stranger = await openViewer(app.url);
    expect((await send(app.url, `/auth/oidc-like/callback/core?state=${state}&code=c1`, { headers: { cookie: stranger.cookie } })).status).toBe(400);
    const callback = await send(app.url, `/auth/oidc-like/callback/core?state=${state}&code=c1`, { headers: { cookie: own.cookie } });
    expect([callback.status, callback.headers.location]).toEqual([302, "/after"]);
    // The state is spent.
    expect((await send(app.url, `/auth/oidc-like/callback/core?state=${state}&code=c1`, { headers: { cookie: own.cookie } })).status).toBe(400);
    const token = await rpc(app.url, "module/oidc-like/getToken", { viewer: own, body: { args: [{ contextId: "core" }] } });
    expect(token.body.result).toEqual({ access_token: "at-c1", id_token: "id-c1", expires_at: expect.any(Number) });
    expect(JSON.stringify(token.body)).not.toContain("rt-c1");
  });

  it("gets the session, csrfOk, the public origin and the item's identity; never creates a session", async () => {
    const withCsrf = await send(app.url, "/auth/oidc-like/whoami?x=1", { viewer });
    expect(withCsrf.status).toBe(200);
    expect(withCsrf.json).toEqual({
      session: { id: expect.any(String), createdAt: expect.any(Number) },
      csrfOk: true,
      origin: "https://viewer.example",
      kind: "module",
      itemId: "oidc-like",
      url: "https://viewer.example/auth/oidc-like/whoami?x=1",
      prefix: "/auth/oidc-like",
      method: "GET",
      domain: "https://viewer.example",
      signal: true,
      hasLog: true,
    });
    const cookieOnly = await send(app.url, "/auth/oidc-like/whoami", { method: "POST", headers: { cookie: viewer.cookie }, body: "{}" });
    expect(cookieOnly.json).toMatchObject({ csrfOk: false, session: { id: withCsrf.json.session.id }, method: "POST" });
    const anonymous = await send(app.url, "/auth/oidc-like/whoami");
    expect(anonymous.json.session).toBeNull();
    expect(anonymous.headers["set-cookie"]).toBeUndefined();
  });

  it("answers the OIDC-style login: 401 without a session, a redirect built on the public origin with one", async () => {
    expect((await send(app.url, "/auth/oidc-like/login/core")).status).toBe(401);
    const login = await send(app.url, "/auth/oidc-like/login/core", { viewer });
    expect(login.status).toBe(302);
    const location = new URL(login.headers.location!);
    expect(location.origin).toBe("https://idp.example");
    expect(location.searchParams.get("redirect_uri")).toBe("https://viewer.example/auth/oidc-like/callback/core");
    expect((await send(app.url, "/auth/oidc-like/login/elsewhere", { viewer })).status).toBe(404);
  });

  it("wins over the viewer page, and the longest prefix wins", async () => {
    expect((await send(app.url, "/auth/oidc-like/deeper/x")).body).toBe("deeper");
    expect((await send(app.url, "/auth/oidc-like/deeper")).body).toBe("deeper");
    expect((await send(app.url, "/auth/oidc-like-not/x")).body).not.toBe("deeper");
  });

  it("a throw answers 500 INTERNAL_ERROR without the message; one log event per request", async () => {
    const boom = await send(app.url, "/auth/oidc-like/boom");
    expect([boom.status, boom.json.code]).toEqual([500, "INTERNAL_ERROR"]);
    expect(boom.body).not.toContain("secret-looking");
    const events = app.logs.events("route.").filter((line) => String(line.prefix) === "/auth/oidc-like");
    const boomEvents = events.filter((line) => line.reqId === boom.json.details.requestId);
    expect(boomEvents).toHaveLength(1);
    expect(boomEvents[0]).toMatchObject({ event: "route.error", status: 500, kind: "module", id: "oidc-like" });
    expect(JSON.stringify(boomEvents[0])).toContain("secret-looking");
  });

  it("a throw after the answer started closes the connection rather than leaving it open", async () => {
    await expect(send(app.url, "/auth/oidc-like/late", { timeoutMs: 2000 })).rejects.toThrow(/aborted|socket hang up|ECONNRESET/);
  });
});
