// docs/guides/deployment.md "Dev mode in a cluster": in cluster dev mode getLogs and getStatus answer for
// the whole cluster, whichever worker takes the call — one log with ids increasing across
// workers, and every worker listed with its own runtime status.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TEST_SESSION_SECRET } from "../helpers/server.js";
import { openViewer, type Viewer } from "../helpers/http.js";
import type { RunningProcess } from "../helpers/process.js";
import { rpcCall, startCluster, workerPids } from "../helpers/cluster.js";
import { waitFor } from "../helpers/wait.js";

describe("cluster dev mode", () => {
  let cluster: RunningProcess;
  let viewer: Viewer;
  beforeAll(async () => {
    cluster = await startCluster(["--dev"], { APP_SESSION_SECRET: TEST_SESSION_SECRET });
    viewer = await openViewer(cluster.url);
    expect((await workerPids(cluster.url, viewer)).size).toBe(2);
  });
  afterAll(() => cluster?.stop("SIGKILL"));

  it("the master prints the dev console's URL once, and the console answers on any worker", async () => {
    const consoleUrl = `${cluster.url}/__app/dev`;
    await waitFor(() => cluster.stdout().includes(`dev console at ${consoleUrl}`), 5_000, "the dev console line");
    expect(cluster.stdout().split("\n").filter((line) => line.includes("dev console at"))).toHaveLength(1);
    expect((await fetch(consoleUrl, { headers: { connection: "close" } })).status).toBe(200);
  });

  it("getLogs merges every worker's lines in one log with strictly increasing ids", async () => {
    const notes = await Promise.all(Array.from({ length: 6 }, (_, i) => rpcCall(cluster.url, "plugin/cl/note", viewer, [`n${i}`])));
    const notePids = new Set(notes.map((answer) => answer.json.result as number));
    expect(notePids.size).toBe(2);

    // Each call is answered by whichever worker; they all read the master's one buffer.
    const first = await rpcCall(cluster.url, "server/core/getLogs", viewer, [{ afterId: 0, limit: 1000 }]);
    expect(first.status).toBe(200);
    const { entries, lastId } = first.json.result as { entries: Array<{ id: number; pid: number; msg: string; event?: string }>; lastId: number };
    const ids = entries.map((entry) => entry.id);
    for (let i = 1; i < ids.length; i++) expect(ids[i]).toBeGreaterThan(ids[i - 1]!);
    expect(lastId).toBe(ids[ids.length - 1]);
    const noteLines = entries.filter((entry) => /^note n\d$/.test(entry.msg));
    expect(noteLines).toHaveLength(6);
    // The entry's own id is the sequence number; the plugin id the line was logged with stays visible.
    for (const line of noteLines) expect(line).toMatchObject({ id: expect.any(Number), kind: "plugin", itemId: "cl", method: "note" });
    expect(new Set(noteLines.map((entry) => entry.pid))).toEqual(notePids);
    const rpcPids = new Set(entries.filter((entry) => entry.event === "rpc.complete").map((entry) => entry.pid));
    expect(rpcPids.size).toBeGreaterThanOrEqual(2);
    // The master's own lines are in the same log.
    expect(entries.some((entry) => entry.pid === cluster.child.pid && /listening on/.test(entry.msg))).toBe(true);

    // Paging forward from lastId, on any worker, continues the same sequence.
    await rpcCall(cluster.url, "plugin/cl/note", viewer, ["after"]);
    for (const path of ["server/core/getLogs", "server/dev/getLogs"]) {
      const next = await rpcCall(cluster.url, path, viewer, [{ afterId: lastId, limit: 1000 }]);
      expect(next.status).toBe(200);
      expect(next.json.result.entries[0].id).toBe(lastId + 1);
      expect(next.json.result.entries.some((entry: { msg: string }) => entry.msg === "note after")).toBe(true);
    }
  });

  it("getLogs filters in the master's buffer, with the same paging facts as one process", async () => {
    await Promise.all(["filterA", "filterB", "filterC"].map((tag) => rpcCall(cluster.url, "plugin/cl/note", viewer, [tag])));
    for (const path of ["server/core/getLogs", "server/dev/getLogs"]) {
      const answer = await rpcCall(cluster.url, path, viewer, [{ afterId: 0, limit: 2, search: "NOTE FILTER", levels: "log" }]);
      expect(answer.status).toBe(200);
      const page = answer.json.result;
      expect(page).toMatchObject({ devMode: true, scope: path, hasMore: true, maxEntries: 10_000 });
      expect(page.entries.map((entry: { msg: string; level: string }) => [entry.msg.slice(0, 11), entry.level])).toEqual([
        ["note filter", "info"],
        ["note filter", "info"],
      ]);
      expect(page.nextAfterId).toBe(page.entries[1].id);
      const rest = (await rpcCall(cluster.url, path, viewer, [{ afterId: page.nextAfterId, search: "note filter" }])).json.result;
      expect(rest.entries.map((entry: { msg: string }) => entry.msg)).toHaveLength(1);
      expect(rest.hasMore).toBe(false);
      expect(rest.totalBuffered).toBeGreaterThan(rest.entries.length);
    }
  });

  it("getStatus lists both workers with pid, uptime, in-flight calls and their runtime status", async () => {
    await rpcCall(cluster.url, "plugin/cl/limited", viewer, [1]);
    const answer = await rpcCall(cluster.url, "server/core/getStatus", viewer);
    expect(answer.status).toBe(200);
    const status = answer.json.result;
    expect(status.mode).toBe("cluster");
    expect(status.master).toMatchObject({ pid: cluster.child.pid, workersWanted: 2, restarts: 0 });
    expect(status.workers).toHaveLength(2);
    const pids = status.workers.map((worker: { pid: number }) => worker.pid);
    expect(new Set(pids).size).toBe(2);
    expect(pids).toContain(status.pid);
    for (const worker of status.workers) {
      expect(worker).toMatchObject({
        state: "ready",
        uptimeSec: expect.any(Number),
        inFlight: { requests: expect.any(Number), rpc: expect.any(Number) },
        breakers: expect.any(Object),
        queues: expect.any(Object),
      });
    }
    // The worker answering this very call has it in flight.
    const self = status.workers.find((worker: { pid: number }) => worker.pid === status.pid);
    expect(self.inFlight.rpc).toBeGreaterThanOrEqual(1);
    // The log buffer getStatus describes is the master's, the one getLogs reads.
    expect(status.logBuffer).toMatchObject({ available: true, maxEntries: 10_000 });
    expect(status.logBuffer.totalBuffered).toBeGreaterThan(0);
    expect(status.registrySummary).toEqual({ pluginCount: 1, moduleCount: 0, plugins: ["cl"], modules: [] });
    const cl = status.registry.find((target: { id: string }) => target.id === "cl");
    expect(cl.methods.map((method: { name: string }) => method.name).sort()).toEqual(["fail", "limited", "note", "pid", "recall", "remember", "slow", "ticks"]);
  });
});
