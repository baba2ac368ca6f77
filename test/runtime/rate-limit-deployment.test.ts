// docs/guides/deployment.md "Rate limits across processes", with real redis-servers: a
// `scope: "deployment"` limit counted atomically by two servers sharing one Redis, its key
// expiring with the window; while Redis is down each process counts it alone (never
// unlimited), logged once, and the server keeps answering.
import { expect, it } from "vitest";
import { Redis } from "ioredis";
import { openViewer, rpc } from "../helpers/http.js";
import { startServer } from "../helpers/server.js";
import { describeWithRedis, startRedis, useRedis } from "../helpers/redis.js";
import { waitFor } from "../helpers/wait.js";
import { join } from "node:path";

const RATELIMIT_APP = join(import.meta.dirname, "../fixtures/ratelimit-app");

const FALLBACK_WARNING = "rate limits: Redis at";

describeWithRedis('rateLimit scope "deployment" with server.redis', () => {
  const redis = useRedis();

  it("counts the calls of two servers sharing one Redis together, atomically, in one key that expires with the window", async () => {
    const config = { server: { redis: { url: redis.url, keyPrefix: "rl-shared:" } } };
    const [a, b] = await Promise.all([startServer({ root: RATELIMIT_APP, config }), startServer({ root: RATELIMIT_APP, config })]);
    const raw = new Redis(redis.url);
    try {
      expect(a.logs.lines.some((line) => String(line.msg).startsWith("rateLimit scope"))).toBe(false);
      const [viewerA, viewerB] = [await openViewer(a.url), await openViewer(b.url)];
      // Ten calls at once, five on each server: `global` admits 3 per 1.5 s in all.
      const answers = await Promise.all(
        Array.from({ length: 10 }, (_, i) => (i % 2 === 0 ? rpc(a.url, "plugin/chat/shared", { viewer: viewerA }) : rpc(b.url, "plugin/chat/shared", { viewer: viewerB }))),
      );
      expect(answers.filter((answer) => answer.status === 200)).toHaveLength(3);
      const refused = answers.filter((answer) => answer.status === 429);
      expect(refused).toHaveLength(7);
      for (const answer of refused) expect(answer.body.code).toBe("RPC_RATE_LIMITED");
      const ttl = await raw.pttl("rl-shared:ratelimit:plugin/chat/shared:0:g");
      // 1.5 s, not rounded to whole seconds.
      expect(ttl).toBeGreaterThan(1_000);
      expect(ttl).toBeLessThanOrEqual(1_500);
      // Whichever server is asked, the window ends when the refusal said.
      const last = await rpc(b.url, "plugin/chat/shared", { viewer: viewerB });
      expect(last.status).toBe(429);
      await new Promise((resolve) => setTimeout(resolve, last.body.details.retryAfterMs));
      expect((await rpc(a.url, "plugin/chat/shared", { viewer: viewerA })).status).toBe(200);
      expect([...a.logs.lines, ...b.logs.lines].some((line) => String(line.msg).startsWith(FALLBACK_WARNING))).toBe(false);
    } finally {
      raw.disconnect();
      await Promise.all([a.close(), b.close()]);
    }
  });

  it("while Redis is down, counts per process with the same numbers (never unlimited), logs it once, and keeps answering", async () => {
    const own = await startRedis();
    const app = await startServer({ root: RATELIMIT_APP, config: { server: { redis: { url: own.url, keyPrefix: "rl-down:", commandTimeoutMs: 300 } } } });
    try {
      const viewer = await openViewer(app.url);
      expect((await rpc(app.url, "plugin/chat/shared", { viewer })).status).toBe(200);
      await own.kill();
      // This process alone: 3 more in its own window, then refused, however many it is asked.
      const statuses = [];
      for (let i = 0; i < 8; i++) statuses.push((await rpc(app.url, "plugin/chat/shared", { viewer })).status);
      expect(statuses).toEqual([200, 200, 200, 429, 429, 429, 429, 429]);
      const refused = await rpc(app.url, "plugin/chat/shared", { viewer });
      expect([refused.status, refused.body.code]).toEqual([429, "RPC_RATE_LIMITED"]);
      expect(refused.body.details.retryAfterMs).toBeLessThanOrEqual(1_500);
      expect((await rpc(app.url, "plugin/chat/free", { viewer })).status).toBe(200);
      const warnings = app.logs.lines.filter((line) => String(line.msg).startsWith(FALLBACK_WARNING));
      expect(warnings).toHaveLength(1);
      expect(warnings[0]!.msg).toContain(`127.0.0.1:${own.port}`);
      expect(warnings[0]!.msg).toContain("deployment-wide limits count in each process");
      // Redis is back: the limit counts there again, and the next outage is said again.
      await own.restart();
      await waitFor(() => (app.server.runtime.status().sharedState as { ready?: boolean } | null)?.ready === true, 5_000, "the connection to Redis");
      const raw = new Redis(own.url);
      try {
        await rpc(app.url, "plugin/chat/shared", { viewer });
        expect(await raw.exists("rl-down:ratelimit:plugin/chat/shared:0:g")).toBe(1);
      } finally {
        raw.disconnect();
      }
      await own.kill();
      await rpc(app.url, "plugin/chat/shared", { viewer });
      expect(app.logs.lines.filter((line) => String(line.msg).startsWith(FALLBACK_WARNING))).toHaveLength(2);
    } finally {
      await app.close();
      await own.stop();
    }
  });
});
