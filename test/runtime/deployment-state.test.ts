// docs/guides/deployment.md "Shared state and Redis", over real `node index.js` processes sharing
// one real redis-server: maxConcurrency counted across processes (concurrencyScope
// "deployment"), a killed holder's slot lapsing with its lease, a breaker opened on one
// process refusing on the other, and Redis killed and restarted under load.
import { afterAll, beforeAll, expect, it } from "vitest";
import { join } from "node:path";
import { Redis } from "ioredis";
import { openViewer, type Viewer } from "../helpers/http.js";
import { rpcCall } from "../helpers/cluster.js";
import { useEntrypoints, type RunningProcess } from "../helpers/process.js";
import { describeWithRedis, useRedis } from "../helpers/redis.js";
import { waitFor } from "../helpers/wait.js";

const ROOT = join(import.meta.dirname, "../fixtures/shared-app");
const LEASE_MS = 1_000;
const RESET_MS = 800;

describeWithRedis("two index.js processes sharing one Redis", () => {
  const redis = useRedis();
  let a: RunningProcess;
  let b: RunningProcess;
  let viewer: Viewer;
  let raw: Redis;
  const start = useEntrypoints(ROOT, () => ({ server: { redis: { url: redis.url, leaseMs: LEASE_MS, commandTimeoutMs: 300 } } }));
  const call = (on: RunningProcess, method: string, args: unknown[] = [], timeoutMs = 8_000) => rpcCall(on.url, `plugin/gpu/${method}`, viewer, args, timeoutMs);

  beforeAll(async () => {
    [a, b] = await Promise.all([start(), start()]);
    // One session secret: the viewer's session holds on both.
    viewer = await openViewer(a.url);
    raw = new Redis(redis.url);
    raw.on("error", () => {});
  });
  afterAll(() => raw?.disconnect());

  it("counts maxConcurrency across both: while A's call holds the slot, B's calls wait, time out or are refused by B's queueLimit", async () => {
    const onA = call(a, "infer", [1_000]);
    await new Promise((resolve) => setTimeout(resolve, 300));
    // B's own slot is free, the deployment's is not, and inferQuick queues nobody: 429 at once.
    const startedAt = Date.now();
    const full = await call(b, "inferQuick", [10]);
    expect([full.status, full.json.code, full.json.details]).toEqual([429, "RPC_QUEUE_FULL", { limit: 0 }]);
    expect(Date.now() - startedAt).toBeLessThan(200);
    // One call may wait: the wait ends with the call's timeout.
    const timedOut = await call(b, "inferShort", [10]);
    expect([timedOut.status, timedOut.json.code, timedOut.json.details]).toEqual([504, "RPC_TIMEOUT", { timeoutMs: 400, queued: true }]);
    // Waits on B, behind A's call.
    const onB = call(b, "inferFlat", [10]);
    await new Promise((resolve) => setTimeout(resolve, 50));
    // B's own slot is held by the waiting call, and inferQuick queues nobody: 429 at once.
    const refused = await call(b, "inferQuick", [10]);
    expect([refused.status, refused.json.code]).toEqual([429, "RPC_QUEUE_FULL"]);
    const [first, second] = await Promise.all([onA, onB]);
    expect([first.status, second.status]).toEqual([200, 200]);
    expect(second.json.result.pid).toBe(b.child.pid);
    expect(second.json.result.startedAt).toBeGreaterThanOrEqual(first.json.result.endedAt);
  });

  it("a breaker opened by failures on A refuses on B from B's first call, and one successful trial closes it on both", async () => {
    expect((await call(a, "flaky", ["fail"])).status).toBe(500);
    expect((await call(a, "flaky", ["fail"])).status).toBe(500);
    await waitFor(async () => Number(await raw.hget("counterpart:breaker:model-server", "openUntil")) > 0, 2_000, "Redis to hold the open breaker");
    // B never used this breaker: its first call is refused, the method does not run.
    const refusal = await call(b, "flaky", ["ok"]);
    expect(refusal.status).toBe(503);
    expect(refusal.json.code).toBe("RPC_CIRCUIT_OPEN");
    expect(Number(refusal.headers["retry-after"])).toBeGreaterThanOrEqual(1);
    await new Promise((resolve) => setTimeout(resolve, RESET_MS + 50));
    // The trial, on B; its success closes the breaker for A too.
    expect((await call(b, "flaky", ["ok"])).status).toBe(200);
    await waitFor(async () => (await call(a, "flaky", ["ok"])).status === 200, 2_000, "A to admit again");
  });

  it("gives the slot of a process killed while holding it to another once its lease lapses", async () => {
    const doomed = await start();
    const held = call(doomed, "infer", [20_000]).catch(() => null);
    await waitFor(async () => (await call(b, "inferQuick", [10])).status === 429, 3_000, "the doomed process to hold the slot");
    doomed.child.kill("SIGKILL");
    const killedAt = Date.now();
    const next = await call(b, "infer", [10]);
    const waited = Date.now() - killedAt;
    expect(next.status).toBe(200);
    // Not at once (the lease was still held), and not later than the lease plus a refresh period.
    expect(waited).toBeGreaterThanOrEqual(LEASE_MS / 3);
    expect(waited).toBeLessThan(LEASE_MS + 1_500);
    await held;
  });

  it("with Redis killed under load: deployment-scoped calls answer 503, plain calls 200, breakers fall back to each process; after a restart all recover", async () => {
    let loading = true;
    const plainStatuses: number[] = [];
    const load = (async () => {
      while (loading) {
        const answers = await Promise.all([a, b].map((on) => rpcCall(on.url, "plugin/gpu/pid", viewer).catch(() => ({ status: 0 }))));
        plainStatuses.push(...answers.map((answer) => answer.status));
      }
    })();
    try {
      await outage();
    } finally {
      loading = false;
      await load;
    }
    expect(plainStatuses.length).toBeGreaterThan(10);
    expect(plainStatuses.filter((status) => status !== 200)).toEqual([]);

    // The log is written asynchronously: wait until the outage's lines are out.
    await waitFor(() => a.stdout().includes("reachable again") && a.stdout().includes("is unreachable"), 5_000, "the outage's log lines");
    const lines = a.stdout().split("\n");
    expect(lines.filter((line) => line.includes("is unreachable"))).toHaveLength(1);
    expect(lines.filter((line) => line.includes("circuit breakers cannot reach Redis"))).toHaveLength(1);
    expect(lines.some((line) => line.includes("reachable again"))).toBe(true);
  });

  async function outage() {
    await redis.kill();
    const unavailable = await waitFor(async () => {
      const answer = await call(a, "infer", [10]);
      return answer.status === 503 ? answer : undefined;
    }, 3_000, "A to notice Redis is gone");
    expect(unavailable.json.code).toBe("SESSION_STORE_UNAVAILABLE");
    const onB = await call(b, "inferQuick", [10]);
    expect([onB.status, onB.json.code]).toEqual([503, "SESSION_STORE_UNAVAILABLE"]);

    // A's own breaker opens on A's failures; B, which saw none, still admits.
    expect((await call(a, "flaky", ["fail"])).status).toBe(500);
    expect((await call(a, "flaky", ["fail"])).status).toBe(500);
    expect((await call(a, "flaky", ["ok"])).json.code).toBe("RPC_CIRCUIT_OPEN");
    expect((await call(b, "flaky", ["ok"])).status).toBe(200);

    await redis.restart();
    await waitFor(async () => (await call(a, "infer", [10])).status === 200, 5_000, "A to take slots again");
    await waitFor(async () => (await call(b, "infer", [10])).status === 200, 5_000, "B to take slots again");
    // Redis came back empty: its state (closed) replaces A's own open breaker.
    await waitFor(async () => (await call(a, "flaky", ["ok"])).status === 200, 3_000, "A's breaker to follow Redis again");
  }
});
