// docs/deployment.md "Graceful shutdown": SIGTERM stops accepting, lets the call under way
// finish with 200 (on a keep-alive connection, as a browser or undici holds it) and exits 0
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
  it("lets an in-flight slow call finish with 200, refuses new connections, exits 0", async () => {
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
    const fresh = await call(run.url, "/health", { timeoutMs: 2_000 }).then(
      (answer) => `answered ${answer.status}`,
      (error: NodeJS.ErrnoException) => error.code,
    );
    expect(fresh).toBe("ECONNREFUSED");

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
  it("a request that arrives while the server shuts down answers 503 SERVICE_UNAVAILABLE", async () => {
    const app = await startServer({ root: join(import.meta.dirname, "../fixtures/runtime-app") });
    const viewer = await openViewer(app.url);
    const client = new Client(app.url, { pipelining: 2 });
    try {
      const headers = { cookie: viewer.cookie, "x-app-csrf": viewer.csrf, "content-type": "application/json" };
      const slow = client.request({ path: "/__rpc/plugin/rt/limited", method: "POST", headers, body: JSON.stringify({ args: [300, "last"] }) });
      const next = client.request({ path: "/health", method: "GET", headers: {} });
      await new Promise((resolve) => setTimeout(resolve, 100));
      const closed = app.close();
      const first = await slow;
      expect(first.statusCode).toBe(200);
      expect(await first.body.json()).toEqual({ result: "last" });
      const second = await next;
      expect(second.statusCode).toBe(503);
      expect(await second.body.json()).toEqual({ error: "Server is shutting down", code: "SERVICE_UNAVAILABLE", details: {} });
      await closed;
    } finally {
      await client.close().catch(() => {});
    }
  });
});
