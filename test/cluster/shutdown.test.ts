// docs/deployment.md "Graceful shutdown": SIGTERM stops accepting, lets the call under way
// finish with 200 (on a keep-alive connection, as a browser or undici holds it) and exits 0
// well before `server.shutdownTimeoutMs` — for `index.js` and for `cluster-index.js`.
import { afterAll, describe, expect, it } from "vitest";
import { startEntrypoint, type RunningProcess } from "../helpers/process.js";
import { TEST_SESSION_SECRET } from "../helpers/server.js";
import { CLUSTER_APP, call } from "./helpers.js";

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
