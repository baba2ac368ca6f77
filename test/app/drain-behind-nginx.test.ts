// docs/guides/deployment.md "Graceful shutdown" and "nginx": two hosts (two `cluster-index.js`
// with 2 workers each, on two loopback ports) behind a real nginx configured with the
// docs' own `location /__rpc/` block. One host is stopped (SIGTERM to its master) while a
// call keeps it draining and a steady, bounded stream of RPC POSTs goes through nginx:
// not one of them may fail. A draining process's 503 says that the method never ran, so
// nginx may send the POST to the other host.
import { Agent, request } from "node:http";
import { afterAll, expect, it } from "vitest";
import { CLUSTER_APP, rpcCall } from "../helpers/cluster.js";
import { describeWithNginx, docsNginxLocation, startNginx, type Nginx } from "../helpers/nginx.js";
import { useEntrypoints } from "../helpers/process.js";

/** About 100 calls/s for 2.5 s, each given up after 8 s: bounded in count and in time. */
const CALLS = 250;
const INTERVAL_MS = 10;
const CALL_TIMEOUT_MS = 8_000;

interface Outcome {
  status: number;
  code?: string;
  error?: string;
}

describeWithNginx("a host drained behind nginx", () => {
  const start = useEntrypoints(CLUSTER_APP, () => ({ server: { shutdownTimeoutMs: 8_000 } }), "cluster-index.js", { APP_WORKERS: "2" });
  let nginx: Nginx | undefined;
  const agent = new Agent({ keepAlive: true, maxSockets: 32 });
  afterAll(async () => {
    agent.destroy();
    await nginx?.stop();
  });

  const post = (url: string): Promise<Outcome> =>
    new Promise((resolve) => {
      const body = JSON.stringify({ args: [20] });
      const req = request(
        `${url}/__rpc/plugin/cl/slow`,
        { method: "POST", agent, headers: { "content-type": "application/json", "content-length": Buffer.byteLength(body) }, timeout: CALL_TIMEOUT_MS },
        (res) => {
          const chunks: Buffer[] = [];
          res.on("data", (chunk: Buffer) => chunks.push(chunk));
          res.on("end", () => {
            let code: string | undefined;
            try {
              code = (JSON.parse(Buffer.concat(chunks).toString("utf8")) as { code?: string }).code;
            } catch {
              code = undefined;
            }
            resolve({ status: res.statusCode ?? 0, code });
          });
          res.on("error", (error) => resolve({ status: 0, error: error.message }));
        },
      );
      req.on("timeout", () => req.destroy(new Error("timed out")));
      req.on("error", (error) => resolve({ status: 0, error: error.message }));
      req.end(body);
    });

  it("loses no call while one host drains and exits", { timeout: 40_000 }, async () => {
    const [a, b] = await Promise.all([start(), start()]);
    nginx = await startNginx([a.url, b.url], docsNginxLocation("/__rpc/"));

    const outcomes: Array<Promise<Outcome>> = [];
    const startedAt = Date.now();
    let held: Promise<unknown> | undefined;
    for (let i = 0; i < CALLS; i++) {
      const due = startedAt + i * INTERVAL_MS;
      const wait = due - Date.now();
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
      if (i === 60) {
        // A call of its own keeps host A draining for 1.5 s while the load goes on.
        held = rpcCall(a.url, "plugin/cl/slow", null, [1_500], 10_000);
        await new Promise((resolve) => setTimeout(resolve, 50));
        a.child.kill("SIGTERM");
      }
      outcomes.push(post(nginx.url));
    }
    const results = await Promise.all(outcomes);
    expect(await a.exited).toBe(0);
    expect(await held).toMatchObject({ status: 200 });

    const failed = results.filter((outcome) => outcome.status !== 200);
    const summary = failed.map((outcome) => `${outcome.status} ${outcome.code ?? outcome.error ?? ""}`);
    expect(summary, await nginx.errorLog()).toEqual([]);
    expect(results).toHaveLength(CALLS);
    // The other host still serves, and took the load.
    expect((await post(nginx.url)).status).toBe(200);
    expect(b.child.exitCode).toBe(null);
  });
});
