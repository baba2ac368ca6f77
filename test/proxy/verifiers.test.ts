// docs/guides/proxy.md "Verifiers" and "`verifyProxyAuth`": custom proxy
// verifiers, all/any modes, `verifyProxyAuth`, and the start-up checks that make a
// misconfigured proxy fail at start instead of at its first request.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { join } from "node:path";
import { IncomingMessage, ServerResponse, request as httpRequest } from "node:http";
import { Socket } from "node:net";
import { verifyProxyAuth, type AppConfig } from "../../dist/index.js";
import { startServer, type TestServer } from "../helpers/server.js";
import { openViewer, send, type Viewer } from "../helpers/http.js";
import { TestUpstream } from "../helpers/upstream.js";

const ROOT = join(import.meta.dirname, "../fixtures/proxy-app");
const SECRET = "verifier-test-jwt-secret-32-bytes-ok!";

describe("custom proxy verifiers", () => {
  let upstream: TestUpstream;
  let app: TestServer;
  let viewer: Viewer;
  beforeAll(async () => {
    upstream = await new TestUpstream().start();
    type Auth = { enabled?: boolean; verifiers?: string[] | Record<string, Record<string, unknown>>; mode?: "all" | "any" };
    const proxy = (auth: Auth, headers?: Record<string, string>) => ({ baseUrl: `${upstream.origin}/v`, auth, ...(headers ? { headers } : {}) });
    app = await startServer({
      root: ROOT,
      config: {
        server: {
          secure: {
            proxies: {
              all: proxy({ enabled: true, verifiers: ["header-key", "async-pass"] }),
              allthrows: proxy({ enabled: true, verifiers: ["header-key", "throws"] }),
              refuses: proxy({ enabled: true, verifiers: ["refuses"] }),
              truthy: proxy({ enabled: true, verifiers: ["truthy"] }),
              any: proxy({ enabled: true, mode: "any", verifiers: ["refuses", "throws", "header-key"] }),
              anyfail: proxy({ enabled: true, mode: "any", verifiers: ["refuses", "throws", "truthy"] }),
              target: proxy({ enabled: true, verifiers: ["target"] }),
              okobject: proxy({ enabled: true, verifiers: ["ok-object"] }),
              settings: proxy({ verifiers: { "ok-object": {}, settings: { allow: true, note: "n" } } }),
              settingsdeny: proxy({ verifiers: { settings: { allow: false } } }),
              slow: { baseUrl: `${upstream.origin}/slow-verified`, auth: { enabled: true, verifiers: ["slow"] } },
              disabled: proxy({ enabled: false, verifiers: ["refuses"] }, { "x-api-key": "static-only" }),
              implied: proxy({ verifiers: ["refuses"] }),
              empty: proxy({}),
              statics: proxy({ enabled: true, verifiers: ["header-key"] }, { "X-API-Key": "static-wins" }),
              anyjwt: { ...proxy({ enabled: true, mode: "any", verifiers: ["header-key", "jwt"] }), auth: { enabled: true, mode: "any", verifiers: ["header-key", "jwt"], jwt: { secret: SECRET, userClaimHeader: "X-User-Id" } } },
              jwtany: { ...proxy({ enabled: true, mode: "any", verifiers: ["jwt", "header-key"] }), auth: { enabled: true, mode: "any", verifiers: ["jwt", "header-key"], jwt: { secret: SECRET, userClaimHeader: "X-User-Id", forward: true } } },
            },
          },
        },
      },
    });
    viewer = await openViewer(app.url);
  });
  afterAll(async () => {
    await app.close();
    await upstream.close();
  });

  const KEY = { "x-key": "open-sesame" };
  const get = (alias: string, headers: Record<string, string> = {}, rest = "/r") => send(app.url, `/proxy/${alias}${rest}`, { viewer, headers });

  it("passes a verifier that returns { ok: true }, as RPC verifiers do", async () => {
    expect((await get("okobject")).status).toBe(200);
  });

  it("hands each verifier its settings when auth.verifiers is a map, and the frozen plugin-facing core", async () => {
    const passed = await get("settings");
    expect(passed.status).toBe(200);
    const seen = JSON.parse(passed.json.headers["x-settings"]);
    expect(seen).toEqual({ verifierName: "settings", verifierConfig: { allow: true, note: "n" }, devMode: false, frozen: true, keys: ["server", "client", "CORE"] });
    const refused = await get("settingsdeny");
    expect(refused.status).toBe(401);
    expect(refused.json.code).toBe("PROXY_AUTH_FAILED");
  });

  it("in all mode, needs every verifier; a thrown reason goes to the log only", async () => {
    const passed = await get("all", KEY);
    expect(passed.status).toBe(200);
    expect(passed.json.headers["x-async"]).toBe("all,string,function,object");
    expect((await get("all")).json.code).toBe("PROXY_AUTH_FAILED");
    const thrown = await get("allthrows", KEY);
    expect([thrown.status, thrown.json.code]).toEqual([401, "PROXY_AUTH_FAILED"]);
    expect(thrown.body).not.toContain("secret reason");
    const line = app.logs.lines.filter((entry) => entry.msg === "proxy verifier refused the request" && entry.verifier === "throws").at(-1);
    expect(line).toMatchObject({ level: 30, alias: "allthrows", reason: "throws: secret reason" });
  });

  it("in any mode, a request let in by another verifier carries no forged identity and no unchecked token", async () => {
    const forged = { ...KEY, "x-user-id": "admin", authorization: "Bearer garbage" };
    for (const alias of ["anyjwt", "jwtany"]) {
      const answer = await get(alias, forged);
      expect([alias, answer.status]).toEqual([alias, 200]);
      expect(answer.json.headers["x-user-id"]).toBeUndefined();
      expect(answer.json.headers.authorization).toBeUndefined();
    }
  });

  it("passes only on true or { ok: true }: false and truthy values fail", async () => {
    expect((await get("refuses")).status).toBe(401);
    expect((await get("truthy")).status).toBe(401);
  });

  it("in any mode, needs one verifier", async () => {
    const passed = await get("any", KEY);
    expect(passed.status).toBe(200);
    expect(passed.json.headers["x-verified"]).toBe("header-key");
    expect((await get("any")).status).toBe(401);
    expect((await get("anyfail", KEY)).status).toBe(401);
  });

  it("gives the verifier the target path as sent, query included", async () => {
    const answer = await get("target", {}, "/a%20b/c?d=1&e=%26");
    expect(answer.json.headers["x-target-path"]).toBe("/a%20b/c?d=1&e=%26");
    expect(answer.json.url).toBe("/v/a%20b/c?d=1&e=%26");
  });

  it("with auth.enabled false or an empty auth, uses static headers only", async () => {
    const disabled = await get("disabled");
    expect(disabled.status).toBe(200);
    expect(disabled.json.headers["x-api-key"]).toBe("static-only");
    expect((await get("empty")).status).toBe(200);
  });

  it("runs listed verifiers when auth.enabled is omitted", async () => {
    expect((await get("implied")).status).toBe(401);
  });

  it("applies static headers after the verifiers' changes", async () => {
    const answer = await get("statics", KEY);
    expect(answer.json.headers["x-verified"]).toBe("header-key");
    expect(answer.json.headers["x-api-key"]).toBe("static-wins");
    expect(answer.json.rawHeaders.filter((_: string, i: number) => i % 2 === 0).filter((name: string) => name.toLowerCase() === "x-api-key")).toHaveLength(1);
  });

  it("does not go upstream when the client leaves while a verifier is still busy", async () => {
    const target = new URL(app.url);
    const req = httpRequest({ host: target.hostname, port: target.port, path: "/proxy/slow/x", headers: { cookie: viewer.cookie, "x-app-csrf": viewer.csrf } });
    req.on("error", () => undefined);
    req.end();
    await new Promise((resolve) => setTimeout(resolve, 50));
    req.destroy();
    await new Promise((resolve) => setTimeout(resolve, 600));
    expect(upstream.find("/slow-verified")).toEqual([]);
    const events = app.logs.events("proxy.").filter((line) => line.alias === "slow");
    expect(events).toEqual([expect.objectContaining({ event: "proxy.error", code: "PROXY_CLIENT_CLOSED", status: 499 })]);
    // The same alias does forward when the client waits.
    expect((await get("slow")).status).toBe(200);
    expect(upstream.find("/slow-verified")).toHaveLength(1);
  });

  it("exports verifyProxyAuth, which runs a proxy's verifiers and reports the outcome", async () => {
    const core = app.server.core;
    const req = new IncomingMessage(new Socket());
    const res = new ServerResponse(req);
    const state = () => ({ headers: Object.create(null) as Record<string, string>, targetPath: "/x" });
    const config = (auth: unknown) => ({ baseUrl: "http://127.0.0.1:1/", auth }) as never;
    req.headers = { "x-key": "open-sesame" };
    const passing = state();
    expect(await verifyProxyAuth(req, res, core, "manual", config({ enabled: true, verifiers: ["header-key"] }), passing)).toBe(true);
    expect(passing.headers["x-verified"]).toBe("header-key");
    expect(await verifyProxyAuth(req, res, core, "manual", config({ enabled: true, verifiers: ["refuses"] }), state())).toBe(false);
    expect(await verifyProxyAuth(req, res, core, "manual", config({ enabled: true, verifiers: ["not-registered"] }), state())).toBe(false);
    expect(await verifyProxyAuth(req, res, core, "manual", config({ enabled: true, verifiers: [] }), state())).toBe(false);
    expect(await verifyProxyAuth(req, res, core, "manual", config(undefined), state())).toBe(true);
    expect(await verifyProxyAuth(req, res, core, "manual", config({ enabled: false, verifiers: ["refuses"] }), state())).toBe(true);
  });
});

describe("start-up checks", () => {
  const proxies = (proxy: Record<string, unknown>) => ({ server: { secure: { proxies: { p: { baseUrl: "http://127.0.0.1:9/api", ...proxy } } } } });
  const jwtProxy = (jwt?: Record<string, unknown>) => proxies({ auth: { enabled: true, verifiers: ["jwt"], ...(jwt ? { jwt } : {}) } });
  const withGlobal = (config: any, jwt: Record<string, unknown>) => ({ ...config, server: { ...config.server, auth: { jwt } } });

  const failures: Array<[string, unknown, RegExp, Record<string, string>?]> = [
    ["auth.enabled true without verifiers", proxies({ auth: { enabled: true } }), /server\.secure\.proxies\.p\.auth\.verifiers: auth\.enabled is true but no verifiers/],
    ["auth.enabled true with an empty list", proxies({ auth: { enabled: true, verifiers: [] } }), /server\.secure\.proxies\.p\.auth\.verifiers/],
    ["an unknown verifier name", proxies({ auth: { enabled: true, verifiers: ["header-key", "nope"] } }), /server\.secure\.proxies\.p\.auth\.verifiers\.1: no proxy verifier named "nope"/],
    ["an inherited verifier name", proxies({ auth: { verifiers: ["toString"] } }), /server\.secure\.proxies\.p\.auth\.verifiers\.0: no proxy verifier named "toString"/],
    ["forward given as a string", jwtProxy({ secret: SECRET, forward: "true" }), /server\.secure\.proxies\.p\.auth\.jwt\.forward/],
    ["a global forward given as a string", withGlobal(jwtProxy(), { secret: SECRET, forward: "true" }), /server\.auth\.jwt\.forward/],
    ["a short global secret", withGlobal(jwtProxy(), { secret: "too-short-secret" }), /server\.auth\.jwt\.secret: the JWT secret must be at least 32 bytes/],
    ["a short global secret nothing uses yet", withGlobal({}, { secret: "x".repeat(31) }), /server\.auth\.jwt\.secret: .*32 bytes/],
    ["a short per-proxy secret", withGlobal(jwtProxy({ secret: "short" }), { secret: SECRET }), /server\.secure\.proxies\.p\.auth\.jwt\.secret: .*32 bytes/],
    ["an unset secretEnv", jwtProxy({ secretEnv: "COUNTERPART_UNSET_JWT" }), /server\.secure\.proxies\.p\.auth\.jwt\.secretEnv names environment variable COUNTERPART_UNSET_JWT, which is not set/],
    ["a short secret from secretEnv", jwtProxy({ secretEnv: "SHORT_JWT" }), /server\.secure\.proxies\.p\.auth\.jwt\.secretEnv \(SHORT_JWT\): .*32 bytes/, { SHORT_JWT: "short" }],
    ["secret and secretEnv side by side", jwtProxy({ secret: SECRET, secretEnv: "X" }), /server\.secure\.proxies\.p\.auth\.jwt: set either secret or secretEnv/],
    ["no secret anywhere", jwtProxy(), /no JWT secret/],
    [
      "an RPC context with a short secret",
      { server: { secure: { rpcVerifiers: { api: { verifiers: { jwt: { secret: "short" } } } } } } },
      /server\.secure\.rpcVerifiers\.api\.verifiers\.jwt\.secret: .*32 bytes/,
    ],
    [
      "an RPC context with an unset secretEnv",
      { server: { secure: { rpcVerifiers: { api: { verifiers: { jwt: { secretEnv: "COUNTERPART_UNSET_RPC" } } } } } } },
      /server\.secure\.rpcVerifiers\.api\.verifiers\.jwt\.secretEnv names environment variable COUNTERPART_UNSET_RPC/,
    ],
    [
      "an RPC context with a mistyped jwt setting",
      { server: { auth: { jwt: { secret: SECRET } }, secure: { rpcVerifiers: { api: { verifiers: { jwt: { clockSkewSec: "5" } } } } } } },
      /server\.secure\.rpcVerifiers\.api\.verifiers\.jwt\.clockSkewSec/,
    ],
    [
      "an RPC context with an unknown jwt setting",
      { server: { auth: { jwt: { secret: SECRET } }, secure: { rpcVerifiers: { api: { verifiers: { jwt: { audiance: "x" } } } } } } },
      /server\.secure\.rpcVerifiers\.api\.verifiers\.jwt.*audiance/,
    ],
    ["a baseUrl with a query", { server: { secure: { proxies: { p: { baseUrl: "http://127.0.0.1:9/api?k=1" } } } } }, /server\.secure\.proxies\.p\.baseUrl: must not carry a query/],
    ["a baseUrl with credentials", { server: { secure: { proxies: { p: { baseUrl: "http://u:pw@127.0.0.1:9/" } } } } }, /server\.secure\.proxies\.p\.baseUrl: must not carry credentials/],
    ["a baseUrl that is not http", { server: { secure: { proxies: { p: { baseUrl: "file:///etc/passwd" } } } } }, /server\.secure\.proxies\.p\.baseUrl/],
    ["a static header value with a line break", proxies({ headers: { "x-api-key": "a\r\nInjected: 1" } }), /server\.secure\.proxies\.p\.headers\.x-api-key/],
    ["a static header with an invalid name", proxies({ headers: { "bad name": "v" } }), /server\.secure\.proxies\.p\.headers\.bad name/],
    ["a static Transfer-Encoding header", proxies({ headers: { "Transfer-Encoding": "chunked" } }), /server\.secure\.proxies\.p\.headers\.Transfer-Encoding: a static header may not set transfer-encoding/],
    ["a static Host header", proxies({ headers: { host: "other.example" } }), /server\.secure\.proxies\.p\.headers\.host/],
    ["a metrics token shorter than 16 characters", { server: { metrics: { enabled: true, token: "short" } } }, /server\.metrics\.token/],
  ];
  for (const [name, config, message, env] of failures) {
    it(`refuses to start with ${name}, naming the key`, async () => {
      const started = startServer({ root: ROOT, config: config as AppConfig, env });
      await expect(started).rejects.toThrow(message);
      await expect(started).rejects.toMatchObject({ name: "StartupError" });
    });
  }

  it("skips the built-in jwt checks when a plugin replaces the jwt verifiers", async () => {
    const config = {
      plugins: { gatekeeper: { replaceJwt: true } },
      server: {
        auth: { jwt: { secret: "short" } },
        secure: {
          proxies: { p: { baseUrl: "http://127.0.0.1:9/", auth: { enabled: true, verifiers: ["jwt"] } } },
          rpcVerifiers: { api: { verifiers: { jwt: {} } } },
        },
      },
    };
    const app = await startServer({ root: ROOT, config });
    try {
      const viewer = await openViewer(app.url);
      const refused = await send(app.url, "/proxy/p/x", { viewer });
      expect(refused.json.code).toBe("PROXY_AUTH_FAILED");
    } finally {
      await app.close();
    }
  });

  it("starts with a secret of exactly 32 bytes taken from secretEnv", async () => {
    const app = await startServer({ root: ROOT, config: jwtProxy({ secretEnv: "JWT_32" }), env: { JWT_32: "x".repeat(32) } });
    await app.close();
  });
});
