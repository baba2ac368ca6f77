// docs/guides/deployment.md "Graceful shutdown": SIGTERM refuses new work with 503, lets the call under
// way finish with 200 (on a keep-alive connection, as a browser or undici holds it) and exits 0
// well before `server.shutdownTimeoutMs` — for `index.js` and for `cluster-index.js`; a call
// that outlasts the limit does not hold the exit; a request that arrives on an open
// connection while the server closes answers 503.
import { afterAll, describe, expect, it } from "vitest";
import { join } from "node:path";
import { Client } from "undici";
import { TEST_SESSION_SECRET, startServer } from "../helpers/server.js";
import { openViewer } from "../helpers/http.js";
import { startEntrypoint, type RunningProcess } from "../helpers/process.js";
import { CLUSTER_APP, call } from "../helpers/cluster.js";
import { configFile } from "../helpers/app-root.js";

const running: RunningProcess[] = [];
afterAll(async () => {
  await Promise.all(running.map((run) => run.stop("SIGKILL")));
});

const entrypoints: Array<[string, Record<string, string>]> = [
  ["index.js", {}],
  ["cluster-index.js", { APP_WORKERS: "2" }],
];

describe.each(entrypoints)("SIGTERM on node %s", (entry, env) => {
  it("lets an in-flight slow call finish with 200, answers new requests 503, exits 0", async () => {
    const run = await startEntrypoint(["--port", "0", "--root", CLUSTER_APP], { APP_SESSION_SECRET: TEST_SESSION_SECRET, ...env }, entry);
    running.push(run);
    // fetch keeps its connection alive: the server must not wait for the client to let go.
    const started = Date.now();
    const slow = fetch(`${run.url}/__rpc/plugin/cl/slow`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ args: [1200] }),
    }).then(async (response) => ({ status: response.status, body: (await response.json()) as any, atMs: Date.now() - started }));
    await new Promise((resolve) => setTimeout(resolve, 300));
    run.child.kill("SIGTERM");

    await new Promise((resolve) => setTimeout(resolve, 300));
    // Still listening while it drains, so that probes answer (test/health/probes.test.ts);
    // new work on a fresh connection is refused with 503 and the connection closed, saying
    // that it never ran: a balancer may send it to another host, POST or not.
    const fresh = await call(run.url, "/health", { timeoutMs: 2_000 });
    expect([fresh.status, fresh.json.code, fresh.headers.connection]).toEqual([503, "SERVICE_UNAVAILABLE", "close"]);
    expect([fresh.headers["x-app-unprocessed"], fresh.headers["retry-after"]]).toEqual(["1", "1"]);
    const rpcRefused = await call(run.url, "/__rpc/plugin/cl/slow", { method: "POST", headers: { "content-type": "application/json" }, body: '{"args":[1]}', timeoutMs: 2_000 });
    expect([rpcRefused.status, rpcRefused.json.code, rpcRefused.headers["x-app-unprocessed"]]).toEqual([503, "SERVICE_UNAVAILABLE", "1"]);

    const answer = await slow;
    expect(answer.status).toBe(200);
    expect(answer.body.result.sleptMs).toBe(1200);
    expect(await run.exited).toBe(0);
    // Far from the 10 s limit: nothing waited for the idle keep-alive socket.
    expect(Date.now() - started).toBeLessThan(4_000);
    expect(run.stdout()).toMatch(/"msg":"stopped"/);
  });
});

describe("SIGTERM with a call that outlasts server.shutdownTimeoutMs", () => {
  it("waits for it at most shutdownTimeoutMs, says so, and exits 0", async () => {
    const config = configFile({ server: { shutdownTimeoutMs: 500 } });
    const run = await startEntrypoint(["--port", "0", "--root", CLUSTER_APP, "--config", config], { APP_SESSION_SECRET: TEST_SESSION_SECRET });
    running.push(run);
    const slow = fetch(`${run.url}/__rpc/plugin/cl/slow`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ args: [10_000] }),
    }).then(
      (response) => response.status,
      () => "cut off",
    );
    await new Promise((resolve) => setTimeout(resolve, 300));
    const signalled = Date.now();
    run.child.kill("SIGTERM");
    expect(await run.exited).toBe(0);
    const waitedMs = Date.now() - signalled;
    expect(waitedMs).toBeGreaterThanOrEqual(450);
    expect(waitedMs).toBeLessThan(3_000);
    expect(run.stdout()).toContain("in-flight calls did not finish in time");
    expect(await slow).toBe("cut off");
  });
});

describe("a server that is closing", () => {
  it("a request on an open keep-alive connection while the server drains answers 503 SERVICE_UNAVAILABLE", async () => {
    const app = await startServer({ root: join(import.meta.dirname, "../fixtures/runtime-app") });
    const viewer = await openViewer(app.url);
    const calls = new Client(app.url);
    const other = new Client(app.url);
    try {
      // A connection the server already answered on, kept alive by its client.
      const first = await other.request({ path: "/health", method: "GET" });
      expect(first.statusCode).toBe(200);
      await first.body.dump();
      const headers = { cookie: viewer.cookie, "x-app-csrf": viewer.csrf, "content-type": "application/json" };
      const slow = calls.request({ path: "/__rpc/plugin/rt/limited", method: "POST", headers, body: JSON.stringify({ args: [300, "last"] }) });
      await new Promise((resolve) => setTimeout(resolve, 100));
      const closed = app.close();
      const next = await other.request({ path: "/health", method: "GET" });
      expect(next.statusCode).toBe(503);
      expect(next.headers.connection).toBe("close");
      expect(await next.body.json()).toEqual({ error: "Server is shutting down", code: "SERVICE_UNAVAILABLE", details: {} });
      const answered = await slow;
      expect(answered.statusCode).toBe(200);
      expect(await answered.body.json()).toEqual({ result: "last" });
      await closed;
    } finally {
      await Promise.all([calls.close().catch(() => {}), other.close().catch(() => {})]);
    }
  });
});
