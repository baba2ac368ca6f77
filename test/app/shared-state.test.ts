// docs/guides/deployment.md "Shared state and Redis", in one process: a deployment-wide limit
// without Redis is said once at start and counts per process; with Redis, getStatus and
// runtime.status() show it; a Redis that is down at start lets the server start, the
// calls that need it answer 503 and recover by themselves once Redis is up.
import { describe, expect, it } from "vitest";
import { join } from "node:path";
import { openViewer, rpc, send } from "../helpers/http.js";
import { startServer } from "../helpers/server.js";
import { describeWithRedis, startRedis, useRedis } from "../helpers/redis.js";
import { waitFor } from "../helpers/wait.js";
import { Redis } from "ioredis";

const ROOT = join(import.meta.dirname, "../fixtures/shared-app");

describe("concurrencyScope \"deployment\" without Redis", () => {
  it("warns once at start naming the methods, and counts this process's calls", async () => {
    const app = await startServer({ root: ROOT, config: {} });
    try {
      const warnings = app.logs.lines.filter((line) => String(line.msg).startsWith('concurrencyScope "deployment" needs server.redis'));
      expect(warnings).toHaveLength(1);
      expect((warnings[0]!.methods as string[]).sort()).toEqual(["plugin/gpu/infer", "plugin/gpu/inferFlat", "plugin/gpu/inferQuick", "plugin/gpu/inferShort"]);
      expect(app.server.runtime.status().sharedState).toBeNull();
      const viewer = await openViewer(app.url);
      const holding = rpc(app.url, "plugin/gpu/infer", { viewer, body: { args: [300] } });
      await new Promise((resolve) => setTimeout(resolve, 50));
      // This process's own slot is taken, and inferQuick queues nobody.
      const quick = await rpc(app.url, "plugin/gpu/inferQuick", { viewer, body: { args: [10] } });
      expect([quick.status, quick.body.code]).toEqual([429, "RPC_QUEUE_FULL"]);
      expect((await holding).status).toBe(200);
    } finally {
      await app.close();
    }
  });
});

describeWithRedis("server.redis in one process", () => {
  const redis = useRedis();

  it("shows Redis's kind and readiness in getStatus and runtime.status()", async () => {
    const app = await startServer({ root: ROOT, dev: true, config: { server: { redis: { url: redis.url } } } });
    try {
      expect(app.logs.lines.some((line) => String(line.msg).startsWith("concurrencyScope"))).toBe(false);
      expect(app.server.runtime.status().sharedState).toEqual({ kind: "redis", ready: true });
      const viewer = await openViewer(app.url);
      const status = await rpc(app.url, "server/core/getStatus", { viewer });
      expect(status.body.result.sharedState).toEqual({ kind: "redis", ready: true });
      expect(status.body.result.sessionStore).toEqual({ kind: "redis" });
      expect(status.body.result.registry[0].methods.find((method: { name: string }) => method.name === "infer").policy.concurrencyScope).toBe("deployment");
    } finally {
      await app.close();
    }
  });

  it("starts while Redis is down: deployment-scoped calls answer 503, others 200, and both work once Redis is up", async () => {
    const later = await startRedis();
    await later.kill();
    const app = await startServer({ root: ROOT, config: { server: { redis: { url: later.url, commandTimeoutMs: 200 } } } });
    try {
      expect(app.logs.lines.some((line) => String(line.msg).includes("is unreachable"))).toBe(true);
      expect(app.server.runtime.status().sharedState).toEqual({ kind: "redis", ready: false });
      const viewer = await openViewer(app.url);
      const refused = await rpc(app.url, "plugin/gpu/infer", { viewer, body: { args: [10] } });
      expect([refused.status, refused.body.code]).toEqual([503, "SESSION_STORE_UNAVAILABLE"]);
      expect((await rpc(app.url, "plugin/gpu/pid", { viewer })).status).toBe(200);
      await later.restart();
      await waitFor(async () => (await rpc(app.url, "plugin/gpu/infer", { viewer, body: { args: [10] } })).status === 200, 5_000, "the call to succeed");
      expect(app.server.runtime.status().sharedState).toEqual({ kind: "redis", ready: true });
    } finally {
      await app.close();
      await later.stop();
    }
  });

  it("a call whose client leaves while it waits for a deployment-wide slot gives up without taking one", async () => {
    const config = { server: { redis: { url: redis.url, keyPrefix: "gone:" } } };
    // Two servers sharing one Redis: B's call holds B's own slot and waits for the deployment's.
    const [a, b] = await Promise.all([startServer({ root: ROOT, config }), startServer({ root: ROOT, config })]);
    const raw = new Redis(redis.url);
    const slots = () => raw.zcard("gone:semaphore:slots:plugin/gpu/gpu");
    try {
      const viewer = await openViewer(a.url);
      const holding = rpc(a.url, "plugin/gpu/infer", { viewer, body: { args: [500] } });
      await waitFor(async () => (await slots()) === 1, 2_000, "A's slot in Redis");
      const body = JSON.stringify({ args: [10] });
      const left = await send(b.url, "/__rpc/plugin/gpu/infer", { method: "POST", viewer, headers: { "content-type": "application/json" }, body, timeoutMs: 150 }).catch((error: { code?: string }) => error.code);
      expect(left).toBe("TIMEOUT");
      expect((await holding).status).toBe(200);
      await waitFor(async () => (await slots()) === 0, 2_000, "every slot given back");
      expect(b.server.runtime.status().queues).toMatchObject({ "plugin/gpu/gpu": { active: 0, queued: 0 } });
      // Nobody holds a slot: the next call on B runs at once.
      const started = Date.now();
      expect((await rpc(b.url, "plugin/gpu/inferQuick", { viewer, body: { args: [10] } })).status).toBe(200);
      expect(Date.now() - started).toBeLessThan(300);
      expect(await slots()).toBe(0);
    } finally {
      raw.disconnect();
      await Promise.all([a.close(), b.close()]);
    }
  });

  it("logs a slot's lost lease and lets its call finish", async () => {
    const app = await startServer({ root: ROOT, config: { server: { redis: { url: redis.url, keyPrefix: "lost:", leaseMs: 300 } } } });
    const raw = new Redis(redis.url);
    try {
      const viewer = await openViewer(app.url);
      const holding = rpc(app.url, "plugin/gpu/infer", { viewer, body: { args: [600] } });
      await waitFor(async () => (await raw.exists("lost:semaphore:slots:plugin/gpu/gpu")) === 1, 2_000, "the slot in Redis");
      await raw.del("lost:semaphore:slots:plugin/gpu/gpu");
      await waitFor(() => app.logs.text().includes("lost the lease of a deployment-wide slot of plugin/gpu/gpu"), 2_000, "the warning");
      expect((await holding).status).toBe(200);
    } finally {
      raw.disconnect();
      await app.close();
    }
  });

  it("closes its Redis connections with the server", async () => {
    const app = await startServer({ root: ROOT, config: { server: { redis: { url: redis.url } } } });
    const viewer = await openViewer(app.url);
    expect((await rpc(app.url, "plugin/gpu/infer", { viewer, body: { args: [10] } })).status).toBe(200);
    await app.close();
    expect(app.server.runtime.status().sharedState).toEqual({ kind: "redis", ready: false });
  });
});
