// docs/guides/server-methods.md "Rate limits", per process over real HTTP: each key (session, user, address,
// everyone), the 429 with Retry-After and a retryAfterMs after which a call is admitted,
// the check before the body and before slots and breakers, points given back in the array
// form, the log event, the metric and getStatus.
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { openViewer, rawRequest, rpc, type Viewer } from "../helpers/http.js";
import { sample, scrape } from "../helpers/metrics.js";
import { startServer, useServer } from "../helpers/server.js";

const RATELIMIT_APP = join(import.meta.dirname, "../fixtures/ratelimit-app");
const config = {
  server: {
    metrics: { enabled: true },
    secure: { rpcVerifiers: { users: { verifiers: { "header-user": {} } } } },
  },
};
const asUser = (viewer: Viewer, user?: string) => ({ viewer, body: { args: [], contextId: "users" }, headers: user ? { "x-user": user } : ({} as Record<string, string>) });

describe("rateLimit per process", () => {
  const app = useServer({ root: RATELIMIT_APP, config });

  it("key session: a viewer over the limit gets 429 RPC_RATE_LIMITED with Retry-After; others do not; after retryAfterMs it is admitted", async () => {
    const other = await openViewer(app.url);
    expect((await rpc(app.url, "plugin/chat/tell", { viewer: app.viewer })).status).toBe(200);
    expect((await rpc(app.url, "plugin/chat/tell", { viewer: app.viewer })).status).toBe(200);
    const refused = await rpc(app.url, "plugin/chat/tell", { viewer: app.viewer });
    expect([refused.status, refused.body.code]).toEqual([429, "RPC_RATE_LIMITED"]);
    const { retryAfterMs } = refused.body.details;
    expect(retryAfterMs).toBeGreaterThan(0);
    expect(retryAfterMs).toBeLessThanOrEqual(1_500);
    expect(refused.headers.get("retry-after")).toBe(String(Math.ceil(retryAfterMs / 1000)));
    // A refusal takes no point: refused again and again, the window still ends when it said.
    for (let i = 0; i < 5; i++) expect((await rpc(app.url, "plugin/chat/tell", { viewer: app.viewer })).status).toBe(429);
    expect((await rpc(app.url, "plugin/chat/tell", { viewer: other })).status).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, retryAfterMs));
    const admitted = await rpc(app.url, "plugin/chat/tell", { viewer: app.viewer, body: { args: ["again"] } });
    expect([admitted.status, admitted.body.result]).toEqual([200, { told: "again" }]);
  });

  it("logs the refusal as the call's one event, rpc.rejected with its code, and counts it in app_rate_limited_total", async () => {
    const viewer = await openViewer(app.url);
    for (let i = 0; i < 2; i++) await rpc(app.url, "plugin/chat/tell", { viewer });
    const before = sample(await scrape(app.url), "app_rate_limited_total", { kind: "plugin", id: "chat", method: "tell" }) ?? 0;
    const refused = await rpc(app.url, "plugin/chat/tell", { viewer });
    expect(refused.status).toBe(429);
    const reqId = refused.headers.get("x-request-id")!;
    const events = app.logs.forRequest(reqId);
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ event: "rpc.rejected", status: 429, code: "RPC_RATE_LIMITED", kind: "plugin", id: "chat", method: "tell" });
    expect(sample(await scrape(app.url), "app_rate_limited_total", { kind: "plugin", id: "chat", method: "tell" })).toBe(before + 1);
  });

  it("answers before the body arrives: a refused upload is never waited for", async () => {
    const viewer = await openViewer(app.url);
    for (let i = 0; i < 2; i++) await rpc(app.url, "plugin/chat/tell", { viewer });
    const answer = await rawRequest(app.url, {
      path: "/__rpc/plugin/chat/tell",
      headers: { "content-type": "application/json", "content-length": 100_000, cookie: viewer.cookie, "x-app-csrf": viewer.csrf },
      chunks: ['{"args":['],
      endBody: false,
    });
    expect(answer.status).toBe(429);
    expect(JSON.parse(answer.body).code).toBe("RPC_RATE_LIMITED");
  });

  it("key ip: every session from one address shares the count, and X-Forwarded-For is ignored without trustProxy", async () => {
    const [a, b] = [await openViewer(app.url), await openViewer(app.url)];
    expect((await rpc(app.url, "plugin/chat/perIp", { viewer: a, headers: { "x-forwarded-for": "203.0.113.1" } })).status).toBe(200);
    expect((await rpc(app.url, "plugin/chat/perIp", { viewer: b, headers: { "x-forwarded-for": "203.0.113.2" } })).status).toBe(200);
    const refused = await rpc(app.url, "plugin/chat/perIp", { viewer: b, headers: { "x-forwarded-for": "203.0.113.3" } });
    expect([refused.status, refused.body.code]).toEqual([429, "RPC_RATE_LIMITED"]);
  });

  it("key global: every caller shares one count", async () => {
    const viewers = [await openViewer(app.url), await openViewer(app.url), await openViewer(app.url), await openViewer(app.url)];
    const statuses = [];
    for (const viewer of viewers) statuses.push((await rpc(app.url, "plugin/chat/everyone", { viewer })).status);
    expect(statuses).toEqual([200, 200, 200, 429]);
  });

  it("key user: counts ctx.user.sub across sessions and apart within one; without a user, the session", async () => {
    const viewer = await openViewer(app.url);
    const alice = await rpc(app.url, "plugin/chat/perUser", asUser(viewer, "alice"));
    expect([alice.status, alice.body.result]).toEqual([200, { sub: "alice" }]);
    const again = await rpc(app.url, "plugin/chat/perUser", asUser(await openViewer(app.url), "alice"));
    expect([again.status, again.body.code]).toEqual([429, "RPC_RATE_LIMITED"]);
    expect((await rpc(app.url, "plugin/chat/perUser", asUser(viewer, "bob"))).status).toBe(200);
    // No user: the session counts, once for this one.
    const anonymous = await openViewer(app.url);
    expect((await rpc(app.url, "plugin/chat/perUser", asUser(anonymous))).status).toBe(200);
    expect((await rpc(app.url, "plugin/chat/perUser", asUser(anonymous))).status).toBe(429);
  });

  it("array form: all must pass, and a point an earlier limit took is given back when a later one refuses", async () => {
    const viewer = await openViewer(app.url);
    // session 2, user 1: alice's second call is refused by the user limit, and the
    // session's point it took comes back, so bob's call still fits in the session's 2.
    expect((await rpc(app.url, "plugin/chat/sessionThenUser", asUser(viewer, "alice"))).status).toBe(200);
    expect((await rpc(app.url, "plugin/chat/sessionThenUser", asUser(viewer, "alice"))).status).toBe(429);
    expect((await rpc(app.url, "plugin/chat/sessionThenUser", asUser(viewer, "bob"))).status).toBe(200);
    // Now the session's 2 are spent: carol is refused by it.
    expect((await rpc(app.url, "plugin/chat/sessionThenUser", asUser(viewer, "carol"))).status).toBe(429);
  });

  it("a refused call takes no concurrency slot and is no breaker failure", async () => {
    const viewer = await openViewer(app.url);
    const holding = rpc(app.url, "plugin/chat/guarded", { viewer, body: { args: [400] } });
    await new Promise((resolve) => setTimeout(resolve, 100));
    // The second point is taken, and the one slot is busy: the queue refuses it.
    const queued = await rpc(app.url, "plugin/chat/guarded", { viewer });
    expect([queued.status, queued.body.code]).toEqual([429, "RPC_QUEUE_FULL"]);
    // Over the limit: refused before the queue is even looked at.
    const limited = await rpc(app.url, "plugin/chat/guarded", { viewer });
    expect([limited.status, limited.body.code]).toEqual([429, "RPC_RATE_LIMITED"]);
    expect((await holding).status).toBe(200);
    expect(app.server.runtime.status().queues).toMatchObject({ "plugin/chat/guarded": { active: 0, queued: 0 } });
    expect(app.server.runtime.status().breakers).toMatchObject({ "plugin/chat/guarded": { state: "closed", failures: 0 } });
    await new Promise((resolve) => setTimeout(resolve, limited.body.details.retryAfterMs));
    expect((await rpc(app.url, "plugin/chat/guarded", { viewer })).status).toBe(200);
  });

  it("a method without rateLimit is never limited", async () => {
    const statuses = new Set<number>();
    for (let i = 0; i < 20; i++) statuses.add((await rpc(app.url, "plugin/chat/free", { viewer: app.viewer })).status);
    expect([...statuses]).toEqual([200]);
  });
});

describe("rateLimit key ip behind a trusted proxy", () => {
  const app = useServer({ root: RATELIMIT_APP, config: { server: { trustProxy: true } } });

  it("counts each X-Forwarded-For client apart", async () => {
    const viewer = app.viewer;
    const call = (ip: string) => rpc(app.url, "plugin/chat/perIp", { viewer, headers: { "x-forwarded-for": ip } });
    expect([(await call("203.0.113.1")).status, (await call("203.0.113.1")).status, (await call("203.0.113.1")).status]).toEqual([200, 200, 429]);
    expect((await call("203.0.113.2")).status).toBe(200);
  });
});

describe("rateLimit in getStatus and at start", () => {
  it("getStatus lists every configured limit, with where it counts; a deployment scope without Redis is said at start", async () => {
    const app = await startServer({ root: RATELIMIT_APP, dev: true, config: { server: { secure: { proxies: { api: { baseUrl: "http://127.0.0.1:9", rateLimit: { points: 5, durationMs: 1_000, key: "ip" } } } } } } });
    try {
      const warnings = app.logs.lines.filter((line) => String(line.msg).startsWith('rateLimit scope "deployment" needs server.redis'));
      expect(warnings).toHaveLength(1);
      expect(warnings[0]!.methods).toEqual(["plugin/chat/shared"]);
      const viewer = await openViewer(app.url);
      const status = await rpc(app.url, "server/core/getStatus", { viewer });
      const limits = status.body.result.rateLimits as Array<{ for: string; limits: unknown[] }>;
      expect(limits.find((entry) => entry.for === "plugin/chat/tell")!.limits).toEqual([{ points: 2, durationMs: 1_500, key: "session", scope: "process", counted: "process" }]);
      expect(limits.find((entry) => entry.for === "plugin/chat/shared")!.limits).toEqual([{ points: 3, durationMs: 1_500, key: "global", scope: "deployment", counted: "process" }]);
      expect(limits.find((entry) => entry.for === "proxy/api")!.limits).toEqual([{ points: 5, durationMs: 1_000, key: "ip", scope: "process", counted: "process" }]);
      expect(limits.some((entry) => entry.for === "plugin/chat/free")).toBe(false);
      // Without Redis the deployment-wide limit counts this process's calls.
      const statuses = [];
      for (let i = 0; i < 4; i++) statuses.push((await rpc(app.url, "plugin/chat/shared", { viewer })).status);
      expect(statuses).toEqual([200, 200, 200, 429]);
    } finally {
      await app.close();
    }
  });
});
