/**
 * The cluster tests' plumbing: the fixture app, `node cluster-index.js` started on it, and
 * calls on a fresh connection each (so that the master's round-robin hands them to
 * different workers), given up after a while: a connection handed to a worker at the
 * moment it is killed is lost with it, and would otherwise hang the test.
 */
import { join } from "node:path";
import { send, type RawAnswer, type RawOptions, type Viewer } from "./http.js";
import { startEntrypoint, type RunningProcess } from "./process.js";

export const CLUSTER_APP = join(import.meta.dirname, "../fixtures/cluster-app");

export function startCluster(args: string[], env: Record<string, string> = {}): Promise<RunningProcess> {
  return startEntrypoint(["--port", "0", "--root", CLUSTER_APP, ...args], { APP_WORKERS: "2", ...env }, "cluster-index.js");
}

/** One request on a connection of its own (`Connection: close`), given up after `timeoutMs` (5 s). */
export function call(url: string, path: string, options: RawOptions = {}): Promise<RawAnswer> {
  return send(url, path, { ...options, headers: { connection: "close", ...options.headers }, timeoutMs: options.timeoutMs ?? 5_000 });
}

/** An RPC call on a connection of its own; `args` become the body's `args`. */
export function rpcCall(url: string, path: string, viewer: Viewer | null, args: unknown[] = [], timeoutMs?: number): Promise<RawAnswer> {
  const body = JSON.stringify({ args });
  return call(url, `/__rpc/${path}`, { method: "POST", viewer, headers: { "content-type": "application/json" }, body, timeoutMs });
}

/** Calls `pid` until `count` different workers answered (round-robin makes this quick). */
export async function workerPids(url: string, viewer: Viewer, count = 2, attempts = 20): Promise<Set<number>> {
  const pids = new Set<number>();
  for (let i = 0; i < attempts && pids.size < count; i++) {
    const answer = await rpcCall(url, "plugin/cl/pid", viewer);
    if (answer.status === 200) pids.add(answer.json.result);
  }
  return pids;
}

export function readyLines(stdout: string): string[] {
  return stdout.split("\n").filter((line) => line.includes("listening on"));
}
