// docs/guides/deployment.md "Shared state and Redis" in a real `node cluster-index.js` sharing a
// real redis-server: a worker killed while it holds a deployment-wide slot gives it back
// when its lease lapses, while the master replaces the worker.
import { beforeAll, expect, it } from "vitest";
import { join } from "node:path";
import { openViewer, type Viewer } from "../helpers/http.js";
import { rpcCall } from "../helpers/cluster.js";
import { useEntrypoints, type RunningProcess } from "../helpers/process.js";
import { describeWithRedis, useRedis } from "../helpers/redis.js";
import { waitFor } from "../helpers/wait.js";

const ROOT = join(import.meta.dirname, "../fixtures/shared-app");
const LEASE_MS = 1_000;

describeWithRedis("cluster-index.js with Redis", () => {
  const redis = useRedis();
  let cluster: RunningProcess;
  let viewer: Viewer;
  const start = useEntrypoints(ROOT, () => ({ server: { redis: { url: redis.url, leaseMs: LEASE_MS, commandTimeoutMs: 300 } } }), "cluster-index.js", { APP_WORKERS: "2" });
  const call = (method: string, args: unknown[] = [], timeoutMs = 8_000) => rpcCall(cluster.url, `plugin/gpu/${method}`, viewer, args, timeoutMs);

  beforeAll(async () => {
    cluster = await start();
    viewer = await openViewer(cluster.url);
  });

  it("gives the slot of a worker killed while holding it to another worker once the lease lapses", async () => {
    const held = call("infer", [20_000], 25_000).catch(() => null);
    // Round robin reaches the holder within a few calls.
    const holder = await waitFor(async () => {
      const answer = await call("runningHere");
      return answer.status === 200 && answer.json.result.running > 0 ? (answer.json.result.pid as number) : undefined;
    }, 3_000, "the worker holding the slot");
    // The other worker waits for the deployment's slot and runs out of time.
    expect((await call("inferShort", [10])).json.code).toBe("RPC_TIMEOUT");
    process.kill(holder, "SIGKILL");
    const killedAt = Date.now();
    const next = await waitFor(async () => {
      // A connection the master hands to the dying worker is lost with it: give up on it soon.
      const answer = await call("infer", [10], 3_000).catch(() => null);
      return answer?.status === 200 ? answer : undefined;
    }, LEASE_MS + 8_000, "a call to get the slot");
    const waited = Date.now() - killedAt;
    expect(next.json.result.pid).not.toBe(holder);
    // Well before the killed call's own 20 s: the lease, not the call, ended the hold.
    expect(waited).toBeLessThan(LEASE_MS + 8_000);
    await held;
  });
});
