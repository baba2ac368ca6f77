/**
 * Session data on Redis (docs/guides/sessions-and-state.md, docs/guides/deployment.md "Shared state and
 * Redis"), over two real `node index.js` processes sharing one real redis-server: what one
 * process saved the other reads (a route's redirect included), the limit holds, the data
 * expires with the session, and a Redis killed under load fails only the calls that use
 * the data, until it is back.
 */
import { beforeAll, expect, it } from "vitest";
import { join } from "node:path";
import { Redis } from "ioredis";
import { openViewer, send, type Viewer } from "../helpers/http.js";
import { rpcCall } from "../helpers/cluster.js";
import { useEntrypoints, type RunningProcess } from "../helpers/process.js";
import { describeWithRedis, useRedis } from "../helpers/redis.js";
import { waitFor } from "../helpers/wait.js";

const ROOT = join(import.meta.dirname, "../fixtures/session-app");
const TTL_SEC = 600;

describeWithRedis("session data shared through Redis by two index.js processes", () => {
  const redis = useRedis();
  let a: RunningProcess;
  let b: RunningProcess;
  let viewer: Viewer;
  const start = useEntrypoints(ROOT, () => ({
    server: { redis: { url: redis.url, commandTimeoutMs: 300 }, session: { ttlSec: TTL_SEC, maxDataBytes: 4096 } },
    plugins: { notes: {} },
  }));
  const call = (on: RunningProcess, method: string, ...args: unknown[]) => rpcCall(on.url, `plugin/notes/${method}`, viewer, args, 8_000);

  beforeAll(async () => {
    [a, b] = await Promise.all([start(), start()]);
    viewer = await openViewer(a.url);
  });

  it("what one process saved the other reads, a route's redirect included", async () => {
    expect((await call(a, "remember", { key: "color", value: "teal" })).status).toBe(200);
    expect((await call(b, "recall", "color")).json.result).toBe("teal");
    await call(b, "addToken", { context: "idp", token: "t1" });
    expect((await call(a, "recall", "oidc")).json.result).toEqual({ tokens: { idp: "t1" } });
    const startFlow = await send(a.url, "/notes-flow/start?state=s-9", { headers: { cookie: viewer.cookie } });
    expect(startFlow.status).toBe(302);
    expect((await send(b.url, "/notes-flow/back", { headers: { cookie: viewer.cookie } })).json).toEqual({ pending: { state: "s-9" } });
  });

  it("refuses data over the limit (413) and keeps what the session had", async () => {
    await call(a, "remember", { key: "small", value: "before" });
    const refused = await call(b, "writeMuch", 5_000);
    expect([refused.status, refused.json.code]).toEqual([413, "SESSION_DATA_TOO_LARGE"]);
    expect((await call(a, "recall", "small")).json.result).toBe("before");
  });

  it("keeps the data in one hash per session that expires with the session", async () => {
    const { id } = (await call(a, "whole")).json.result as { id: string };
    const client = new Redis(redis.url);
    try {
      const key = `counterpart:sess:${id}`;
      expect(await client.hget(key, "color")).toBe('"teal"');
      const ttlMs = await client.pttl(key);
      expect(ttlMs).toBeGreaterThan((TTL_SEC - 60) * 1000);
      expect(ttlMs).toBeLessThanOrEqual(TTL_SEC * 1000);
      // The cookie's secret part (its MAC) is nowhere in Redis, neither in a key nor in a value.
      const mac = viewer.cookie.split(".").at(-1)!;
      const keys = await client.keys("*");
      expect(keys.some((name) => name.includes(mac))).toBe(false);
      const values = await Promise.all(keys.filter((name) => name.includes(":sess:")).map((name) => client.hgetall(name)));
      expect(JSON.stringify(values)).not.toContain(mac);
    } finally {
      client.disconnect();
    }
  });

  it("with Redis killed under load, only the calls that use the data answer 503; once it is back they work again", async () => {
    let loading = true;
    const idOnly: number[] = [];
    const load = (async () => {
      while (loading) {
        const answers = await Promise.all([a, b].map((on) => call(on, "renameSession").catch(() => ({ status: 0 }))));
        idOnly.push(...answers.map((answer) => answer.status));
      }
    })();
    try {
      await redis.kill();
      const refused = await waitFor(async () => {
        const answer = await call(a, "recall", "color");
        return answer.status === 503 ? answer : undefined;
      }, 3_000, "A to notice Redis is gone");
      expect(refused.json.code).toBe("SESSION_STORE_UNAVAILABLE");
      expect((await call(b, "remember", { key: "during", value: 1 })).json.code).toBe("SESSION_STORE_UNAVAILABLE");
      await redis.restart();
      // Back without restarting either server (a Redis without persistence comes back empty).
      await waitFor(async () => (await call(a, "remember", { key: "after", value: 2 })).status === 200, 5_000, "A to write again");
      await waitFor(async () => (await call(b, "recall", "after")).json.result === 2, 5_000, "B to read what A wrote");
    } finally {
      loading = false;
      await load;
    }
    expect(idOnly.length).toBeGreaterThan(4);
    expect(idOnly.filter((status) => status !== 200)).toEqual([]);
  });

  it("once Redis is back, session calls answer as soon as /health/ready does: the store's short circuit closes on the reconnection", async () => {
    await redis.kill();
    // Calls keep finding the store gone for over a second, so that its short circuit has
    // just been armed again (it skips the store for a second after each failed try).
    const until = Date.now() + 1_300;
    while (Date.now() < until) {
      expect((await call(a, "recall", "color")).status).toBe(503);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    await redis.restart();
    await waitFor(async () => (await send(a.url, "/health/ready")).status === 200, 5_000, "A to be ready again");
    const first = await call(a, "remember", { key: "back", value: 3 });
    expect([first.status, first.json.code]).toEqual([200, undefined]);
  });
});
