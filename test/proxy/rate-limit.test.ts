// docs/guides/proxy.md "Rate limits": an alias's `rateLimit` refuses with 429 PROXY_RATE_LIMITED
// and Retry-After before the upstream sees the request, logs proxy.rejected with the code,
// counts app_rate_limited_total, and a `user` limit counts the verifier's `sub`.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { join } from "node:path";
import { startServer, type TestServer } from "../helpers/server.js";
import { openViewer, send } from "../helpers/http.js";
import { hs, nowSec } from "../helpers/jwt.js";
import { sample, scrape } from "../helpers/metrics.js";
import { TestUpstream } from "../helpers/upstream.js";

const ROOT = join(import.meta.dirname, "../fixtures/proxy-app");
const SECRET = "rate-limit-test-jwt-secret-32-bytes!";
const token = (sub: string) => hs("sha256", SECRET, { alg: "HS256", typ: "JWT" }, { sub, exp: nowSec() + 300 });

describe("proxy rateLimit", () => {
  let upstream: TestUpstream;
  let app: TestServer;
  beforeAll(async () => {
    upstream = await new TestUpstream().start();
    app = await startServer({
      root: ROOT,
      config: {
        server: {
          metrics: { enabled: true },
          auth: { jwt: { secret: SECRET } },
          secure: {
            proxies: {
              paid: { baseUrl: `${upstream.origin}/paid`, rateLimit: { points: 2, durationMs: 1_000, key: "session" } },
              perUser: { baseUrl: `${upstream.origin}/users`, auth: { enabled: true, verifiers: ["jwt"] }, rateLimit: { points: 1, durationMs: 60_000, key: "user" } },
              open: { baseUrl: `${upstream.origin}/open` },
            },
          },
        },
      },
    });
  });
  afterAll(async () => {
    await app.close();
    await upstream.close();
  });

  it("answers 429 PROXY_RATE_LIMITED with Retry-After before the upstream sees the request, then admits after retryAfterMs", async () => {
    const viewer = await openViewer(app.url);
    expect((await send(app.url, "/proxy/paid/a", { viewer })).status).toBe(200);
    expect((await send(app.url, "/proxy/paid/a", { viewer, method: "POST", body: "x" })).status).toBe(200);
    const refused = await send(app.url, "/proxy/paid/a", { viewer });
    expect([refused.status, refused.json.code]).toEqual([429, "PROXY_RATE_LIMITED"]);
    const { retryAfterMs } = refused.json.details;
    expect(retryAfterMs).toBeGreaterThan(0);
    expect(retryAfterMs).toBeLessThanOrEqual(1_000);
    expect(refused.headers["retry-after"]).toBe(String(Math.ceil(retryAfterMs / 1000)));
    expect(upstream.find("/paid")).toHaveLength(2);
    const events = app.logs.forRequest(String(refused.headers["x-request-id"]));
    expect(events).toEqual([expect.objectContaining({ event: "proxy.rejected", alias: "paid", status: 429, code: "PROXY_RATE_LIMITED" })]);
    expect(sample(await scrape(app.url), "app_rate_limited_total", { kind: "proxy", id: "paid", method: "" })).toBe(1);
    // Another session has its own count; an alias without a limit has none.
    expect((await send(app.url, "/proxy/paid/a", { viewer: await openViewer(app.url) })).status).toBe(200);
    for (let i = 0; i < 5; i++) expect((await send(app.url, "/proxy/open/a", { viewer })).status).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, retryAfterMs));
    expect((await send(app.url, "/proxy/paid/a", { viewer })).status).toBe(200);
  });

  it("key user counts the sub of the jwt verifier's claims, after the verifiers", async () => {
    const viewer = await openViewer(app.url);
    const call = (sub: string) => send(app.url, "/proxy/perUser/x", { viewer, headers: { authorization: `Bearer ${token(sub)}` } });
    expect((await call("ada")).status).toBe(200);
    const refused = await call("ada");
    expect([refused.status, refused.json.code]).toEqual([429, "PROXY_RATE_LIMITED"]);
    // The same session, another user: counted apart.
    expect((await call("grace")).status).toBe(200);
    // A bad token is refused by the verifier, before the limit.
    const bad = await send(app.url, "/proxy/perUser/x", { viewer, headers: { authorization: "Bearer nope" } });
    expect([bad.status, bad.json.code]).toEqual([401, "PROXY_AUTH_FAILED"]);
    expect(upstream.find("/users")).toHaveLength(2);
  });

  it("refuses to start with a bad alias rateLimit, naming the key", async () => {
    const start = (rateLimit: any) => startServer({ root: ROOT, config: { server: { secure: { proxies: { p: { baseUrl: upstream.origin, rateLimit } } } } } });
    await expect(start({ points: 1, durationMs: 1_000, key: "sesion" })).rejects.toThrow(/server\.secure\.proxies\.p\.rateLimit\.key: Invalid option/);
    await expect(start([{ points: 0, durationMs: 1_000, key: "ip" }])).rejects.toThrow(/server\.secure\.proxies\.p\.rateLimit\.0\.points: Too small/);
  });
});
