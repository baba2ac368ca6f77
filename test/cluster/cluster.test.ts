// docs/guides/deployment.md "The two entrypoints": the real `node cluster-index.js` — one ready line for
// the whole cluster, sessions valid on every worker (the master's secret), a killed worker
// replaced, a crash loop and a worker that cannot start both stopping the master with one
// line, and APP_WORKERS validated.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createServer as createNetServer } from "node:net";
import { openViewer, type Viewer } from "../helpers/http.js";
import { openStream } from "../helpers/stream.js";
import { runToExit, type RunningProcess } from "../helpers/process.js";
import { CLUSTER_APP, readyLines, rpcCall, startCluster, workerPids } from "../helpers/cluster.js";
import { waitFor } from "../helpers/wait.js";
import { configFile } from "../helpers/app-root.js";

const running: RunningProcess[] = [];
afterAll(async () => {
  await Promise.all(running.map((run) => run.stop("SIGKILL")));
});

/** Runs the cluster entrypoint to its end (for the failures). */
const runClusterToExit = (args: string[], env: Record<string, string> = {}, timeoutMs?: number) =>
  runToExit(args, { APP_WORKERS: "2", ...env }, timeoutMs, "cluster-index.js");

describe("node cluster-index.js", () => {
  let cluster: RunningProcess;
  let viewer: Viewer;
  beforeAll(async () => {
    // No APP_SESSION_SECRET: the master makes one and every worker must share it.
    cluster = await startCluster([]);
    running.push(cluster);
    viewer = await openViewer(cluster.url);
  });

  it("prints one JSON ready line for the whole cluster and warns once about the random secret", () => {
    const ready = readyLines(cluster.stdout());
    expect(ready).toHaveLength(1);
    expect(JSON.parse(ready[0]!)).toMatchObject({ level: 30, url: cluster.url, pid: cluster.child.pid, workers: 2 });
    const warnings = cluster.stdout().split("\n").filter((line) => line.includes("APP_SESSION_SECRET is not set"));
    expect(warnings).toHaveLength(1);
  });

  it("accepts one session on every worker: 20 calls spread over both all succeed", async () => {
    const answers = await Promise.all(Array.from({ length: 20 }, () => rpcCall(cluster.url, "plugin/cl/pid", viewer)));
    expect(answers.map((answer) => answer.status)).toEqual(Array(20).fill(200));
    const pids = new Set(answers.map((answer) => answer.json.result as number));
    expect(pids.size).toBeGreaterThanOrEqual(2);
    expect(pids.has(cluster.child.pid!)).toBe(false);
  });

  it("streams from every worker: each stream's events and result come from the worker that took it", async () => {
    const streams = await Promise.all(Array.from({ length: 6 }, () => openStream(cluster.url, "plugin/cl/ticks", { viewer, args: [3] })));
    await Promise.all(streams.map((stream) => stream.finished));
    const pids = new Set<number>();
    for (const stream of streams) {
      const [a, b, c, done] = stream.records.filter((record) => !record.ping);
      expect([a?.event.i, b?.event.i, c?.event.i]).toEqual([0, 1, 2]);
      expect(done).toMatchObject({ done: true, ok: true, result: { pid: a?.event.pid } });
      pids.add(done!.result.pid);
    }
    expect(pids.size).toBe(2);
    expect(pids.has(cluster.child.pid!)).toBe(false);
  });

  it("keeps session data in the master: what one worker saved, every worker reads", async () => {
    const saved = await rpcCall(cluster.url, "plugin/cl/remember", viewer, [{ note: "from one worker" }]);
    expect(saved.status).toBe(200);
    const answers = await Promise.all(Array.from({ length: 10 }, () => rpcCall(cluster.url, "plugin/cl/recall", viewer)));
    expect(answers.map((answer) => answer.json.result.value)).toEqual(Array(10).fill({ note: "from one worker" }));
    expect(new Set(answers.map((answer) => answer.json.result.pid)).size).toBe(2);
  });

  it("replaces a killed worker, and calls keep succeeding after the replacement starts", async () => {
    const before = await workerPids(cluster.url, viewer);
    expect(before.size).toBe(2);
    const [victim, survivor] = [...before];
    process.kill(victim!, "SIGKILL");
    // Calls may land on the survivor meanwhile, and one handed to the victim as it died is
    // lost with it (node:cluster cannot take it back); the replacement shows up as a new pid.
    const replacement = await waitFor(
      async () => {
        const answer = await rpcCall(cluster.url, "plugin/cl/pid", viewer, [], 500).catch(() => null);
        const pid = answer?.status === 200 ? (answer.json.result as number) : undefined;
        return pid !== undefined && !before.has(pid) ? pid : undefined;
      },
      10_000,
      "a replacement worker",
    );
    const answers = await Promise.all(Array.from({ length: 10 }, () => rpcCall(cluster.url, "plugin/cl/pid", viewer)));
    expect(answers.map((answer) => answer.status)).toEqual(Array(10).fill(200));
    for (const answer of answers) expect([survivor, replacement]).toContain(answer.json.result);
    expect(cluster.stdout()).toMatch(/starting a replacement worker in 100 ms/);
    expect(readyLines(cluster.stdout())).toHaveLength(1);
  });
});

describe("a replacement worker that fails to start", () => {
  it("counts as a crash: the healthy worker keeps serving and a later replacement starts", async () => {
    const flag = join(mkdtempSync(join(tmpdir(), "counterpart-flaky-")), "down");
    const cluster = await startCluster(["--port", "0", "--root", CLUSTER_APP, "--strict"], { APP_WORKERS: "2", CLUSTER_APP_FAIL_IF_FILE: flag });
    try {
      const viewer = await openViewer(cluster.url);
      const before = await workerPids(cluster.url, viewer);
      writeFileSync(flag, "");
      process.kill([...before][0]!, "SIGKILL");
      await waitFor(() => /replacement worker failed to start/.test(cluster.stdout()), 5_000, "a failed replacement");
      expect(cluster.child.exitCode).toBeNull();
      rmSync(flag);
      const replacement = await waitFor(
        async () => {
          const answer = await rpcCall(cluster.url, "plugin/cl/pid", viewer, [], 500).catch(() => null);
          const pid = answer?.status === 200 ? (answer.json.result as number) : undefined;
          return pid !== undefined && !before.has(pid) ? pid : undefined;
        },
        10_000,
        "a replacement after the dependency came back",
      );
      expect(replacement).toEqual(expect.any(Number));
    } finally {
      await cluster.stop("SIGKILL");
    }
  });
});

describe("node cluster-index.js failures", () => {
  it("stops with one clear line and exit 1 when workers crash in a loop", async () => {
    const started = Date.now();
    const result = await runClusterToExit(["--port", "0", "--root", CLUSTER_APP], { CLUSTER_APP_CRASH_AFTER_MS: "50" }, 25_000);
    expect(result.code).toBe(1);
    const lines = result.stderr.trim().split("\n");
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^counterpart: workers crashed 5 times within 30 s; stopping/);
    expect(Date.now() - started).toBeLessThan(20_000);
  });

  it("exits 1 with the worker's one line when a worker cannot start (port in use), without respawning", async () => {
    const blocker = createNetServer();
    await new Promise<void>((resolve) => blocker.listen(0, "127.0.0.1", resolve));
    const port = (blocker.address() as { port: number }).port;
    try {
      const result = await runClusterToExit(["--port", String(port), "--root", CLUSTER_APP]);
      expect(result.code).toBe(1);
      expect(result.stderr.trim()).toBe(`counterpart: port ${port} on 127.0.0.1 is already in use`);
      expect(result.stdout).not.toContain("listening on");
      expect(result.stdout).not.toContain("replacement");
    } finally {
      blocker.close();
    }
  });

  const failures: Array<[string, string[], Record<string, string>, RegExp]> = [
    ["APP_WORKERS=abc", [], { APP_WORKERS: "abc" }, /^counterpart: APP_WORKERS must be an integer >= 1, got "abc"$/],
    ["APP_WORKERS=0", [], { APP_WORKERS: "0" }, /^counterpart: APP_WORKERS must be an integer >= 1, got "0"$/],
    ["APP_WORKERS=1.5", [], { APP_WORKERS: "1.5" }, /^counterpart: APP_WORKERS must be an integer >= 1, got "1.5"$/],
    ["a config value of the wrong type", ["--config", configFile({ server: { rpc: { timeoutMs: "fast" } } })], {}, /server\.rpc\.timeoutMs/],
    ["a missing root", ["--root", "/nonexistent/counterpart-root"], {}, /cannot read app root \/nonexistent\/counterpart-root/],
    ["a short session secret", [], { APP_SESSION_SECRET: "short" }, /APP_SESSION_SECRET must be at least 32 bytes/],
  ];
  for (const [name, args, env, message] of failures) {
    it(`checks before forking: ${name} is one line and exit 1`, async () => {
      const result = await runClusterToExit(["--port", "0", "--root", CLUSTER_APP, ...args], env);
      expect(result.code).toBe(1);
      const lines = result.stderr.trim().split("\n");
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(message);
      expect(result.stdout).not.toContain("starting 2 workers");
    });
  }
});
