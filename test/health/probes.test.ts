// docs/guides/deployment.md "Probes": /health/live says the process answers, /health/ready whether
// it should get traffic. Over real HTTP: ready once listening, not before; during a
// SIGTERM drain (node index.js and a cluster) ready answers 503 draining and live 200
// while a slow (streaming) call finishes; while the configured Redis is down ready answers 503 naming
// it, and 200 again once it is back. /health keeps its old answers.
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { createServer } from "../../dist/index.js";
import { CLUSTER_APP, call } from "../helpers/cluster.js";
import { openViewer, send, type RawAnswer } from "../helpers/http.js";
import { startEntrypoint, type RunningProcess } from "../helpers/process.js";
import { describeWithRedis, useRedis } from "../helpers/redis.js";
import { LogCapture, TEST_SESSION_SECRET, startServer } from "../helpers/server.js";
import { openStream } from "../helpers/stream.js";
import { waitFor } from "../helpers/wait.js";

describe("a server that listens", () => {
  it("answers live 200 and ready 200, uncached, with no session and nothing else in the body", async () => {
    const app = await startServer({ root: CLUSTER_APP });
    try {
      const live = await send(app.url, "/health/live");
      const ready = await send(app.url, "/health/ready");
      expect([live.status, live.json]).toEqual([200, { status: "ok" }]);
      expect([ready.status, ready.json]).toEqual([200, { status: "ready" }]);
      for (const answer of [live, ready]) {
        expect(answer.headers["cache-control"]).toBe("no-store");
        expect(answer.headers["set-cookie"]).toBeUndefined();
        expect(answer.headers["content-type"]).toMatch(/^application\/json/);
      }
      const legacy = await send(app.url, "/health");
      expect([legacy.status, legacy.json, legacy.headers["cache-control"]]).toEqual([200, { status: "ok" }, "no-store"]);
      // Probes are not RPC calls: nothing is logged for them.
      expect(app.logs.events()).toEqual([]);
    } finally {
      await app.close();
    }
  });

  it("is not ready while its socket is open before listen() has completed (a cluster worker's first moment)", async () => {
    const server = await createServer({ root: CLUSTER_APP, env: { APP_SESSION_SECRET: TEST_SESSION_SECRET }, logDestination: new LogCapture() });
    await server.app.ready();
    await new Promise<void>((resolve) => server.app.server.listen(0, "127.0.0.1", resolve));
    const url = `http://127.0.0.1:${server.address()!.port}`;
    try {
      const ready = await send(url, "/health/ready");
      expect([ready.status, ready.json, ready.headers["cache-control"]]).toEqual([503, { status: "starting" }, "no-store"]);
      expect((await send(url, "/health/live")).status).toBe(200);
    } finally {
      await server.close();
    }
  });
});

const running: RunningProcess[] = [];
afterAll(async () => {
  await Promise.all(running.map((run) => run.stop("SIGKILL")));
});

/**
 * A probe on a connection of its own, as the kubelet makes them. A connection reset is
 * tried again, as the kubelet's next probe would: in a cluster, a worker with nothing to
 * drain stops at once, and a connection it had accepted but not yet read from goes with
 * it. A refused connection is an answer: nothing listens.
 */
async function probe(url: string, path: string): Promise<RawAnswer> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await call(url, path);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "ECONNRESET" || attempt === 5) throw error;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
}

const entrypoints: Array<[string, Record<string, string>]> = [
  ["index.js", {}],
  ["cluster-index.js", { APP_WORKERS: "2" }],
];

describe.each(entrypoints)("SIGTERM on node %s", (entry, env) => {
  it("keeps answering probes while a slow call drains: ready 503 draining, live 200, new work 503", async () => {
    const run = await startEntrypoint(["--port", "0", "--root", CLUSTER_APP], { APP_SESSION_SECRET: TEST_SESSION_SECRET, ...env }, entry);
    running.push(run);
    expect((await probe(run.url, "/health/ready")).status).toBe(200);
    // A streaming call: its headers arriving prove it runs in a worker before the signal.
    // 60 events, 50 ms apart: about 3 s of drain.
    const slow = await openStream(run.url, "plugin/cl/ticks", { viewer: await openViewer(run.url), args: [60] });
    expect(slow.status).toBe(200);
    run.child.kill("SIGTERM");

    const ready = await waitFor(async () => {
      const answer = await probe(run.url, "/health/ready");
      return answer.status === 503 ? answer : undefined;
    }, 5_000, "ready to fail");
    const live = await probe(run.url, "/health/live");
    const legacy = await probe(run.url, "/health");
    const work = await probe(run.url, "/");
    expect(slow.records.some((record) => record.done)).toBe(false);

    expect([ready.json, ready.headers["cache-control"], ready.headers.connection]).toEqual([{ status: "draining" }, "no-store", "close"]);
    expect([live.status, live.json]).toEqual([200, { status: "ok" }]);
    for (const answer of [legacy, work]) expect([answer.status, answer.json?.code, answer.headers.connection]).toEqual([503, "SERVICE_UNAVAILABLE", "close"]);

    expect(await slow.finished).toBe("end");
    expect(slow.records.filter((record) => "event" in record)).toHaveLength(60);
    expect(slow.records.at(-1)).toMatchObject({ done: true, ok: true });
    expect(await run.exited).toBe(0);
    const after = await call(run.url, "/health/live", { timeoutMs: 2_000 }).then(
      (gone: RawAnswer) => `answered ${gone.status}`,
      (error: NodeJS.ErrnoException) => error.code,
    );
    expect(after).toBe("ECONNREFUSED");
  });
});

describeWithRedis("a server whose Redis goes away", () => {
  const redis = useRedis();

  it("answers ready 503 naming redis (and nothing of its address) while it is down, 200 once it is back; live and /health stay 200", async () => {
    const app = await startServer({ root: join(import.meta.dirname, "../fixtures/shared-app"), config: { server: { redis: { url: redis.url, commandTimeoutMs: 200 } } } });
    const ready = async () => {
      const answer = await send(app.url, "/health/ready");
      return answer.status === 200 ? answer : undefined;
    };
    try {
      // The server waits for Redis for commandTimeoutMs at most, then connects in the background.
      expect((await waitFor(ready, 5_000, "ready")).json).toEqual({ status: "ready" });
      await redis.kill();
      const down = await waitFor(async () => {
        const answer = await send(app.url, "/health/ready");
        return answer.status === 503 ? answer : undefined;
      }, 5_000, "ready to fail");
      expect(down.json).toEqual({ status: "unavailable", reasons: ["redis"] });
      expect(down.body).not.toContain(String(redis.port));
      expect(down.headers["cache-control"]).toBe("no-store");
      expect((await send(app.url, "/health/live")).status).toBe(200);
      expect((await send(app.url, "/health")).status).toBe(200);

      await redis.restart();
      const back = await waitFor(ready, 10_000, "ready again");
      expect(back.json).toEqual({ status: "ready" });
    } finally {
      await app.close();
    }
  });
});
