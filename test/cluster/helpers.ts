/**
 * Helpers for the cluster tests: the fixture app, calls on a fresh connection each (so that
 * the master's round-robin hands them to different workers), and small waits.
 */
import { request as httpRequest } from "node:http";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startEntrypoint, type RunningProcess } from "../helpers/process.js";

export const CLUSTER_APP = join(import.meta.dirname, "../fixtures/cluster-app");

export interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  body: any;
}

export interface Viewer {
  cookie: string;
  csrf: string;
}

/**
 * One HTTP request on a connection of its own (`agent: false`, `Connection: close`), given
 * up after `timeoutMs` (a connection handed to a worker at the moment it is killed is lost
 * with it, and would otherwise hang the test).
 */
export function call(
  url: string,
  path: string,
  options: { method?: string; viewer?: Viewer | null; body?: unknown; headers?: Record<string, string>; timeoutMs?: number } = {},
): Promise<Answer> {
  const target = new URL(path, url);
  const method = options.method ?? (options.body === undefined ? "GET" : "POST");
  const payload = options.body === undefined ? undefined : JSON.stringify(options.body);
  const headers: Record<string, string> = { connection: "close", ...options.headers };
  if (payload !== undefined) headers["content-type"] = "application/json";
  if (options.viewer) {
    headers.cookie = options.viewer.cookie;
    headers["x-app-csrf"] = options.viewer.csrf;
  }
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: target.hostname, port: target.port, path: target.pathname + target.search, method, headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (chunk: Buffer) => chunks.push(chunk));
      res.on("end", () => {
        const text = Buffer.concat(chunks).toString("utf8");
        let body: unknown = text;
        try {
          body = JSON.parse(text);
        } catch {
          // not JSON
        }
        resolve({ status: res.statusCode ?? 0, headers: res.headers, text, body });
      });
      res.on("error", reject);
    });
    req.setTimeout(options.timeoutMs ?? 5_000, () => req.destroy(Object.assign(new Error("request timed out"), { code: "TIMEOUT" })));
    req.on("error", reject);
    req.end(payload);
  });
}

/** An RPC call; `args` become the body's `args`. */
export function rpcCall(url: string, path: string, viewer: Viewer | null, args: unknown[] = [], timeoutMs?: number): Promise<Answer> {
  return call(url, `/__rpc/${path}`, { viewer, body: { args }, timeoutMs });
}

/** Loads the viewer page: its session cookie and CSRF token. */
export async function openViewer(url: string, path = "/"): Promise<Viewer> {
  const page = await call(url, path);
  const setCookie = page.headers["set-cookie"];
  const cookie = (Array.isArray(setCookie) ? setCookie[0] : setCookie)?.split(";")[0] ?? "";
  const match = /window\.APP_CSRF_TOKEN = "([^"]+)"/.exec(page.text);
  if (!cookie.startsWith("app_session=") || !match) throw new Error(`no session from ${path}: ${page.status}`);
  return { cookie, csrf: match[1]! };
}

export function startCluster(args: string[], env: Record<string, string> = {}): Promise<RunningProcess> {
  return startEntrypoint(["--port", "0", "--root", CLUSTER_APP, ...args], { APP_WORKERS: "2", ...env }, "cluster-index.js");
}

/** A config file in a fresh temporary folder. */
export function configFile(config: unknown): string {
  const file = join(mkdtempSync(join(tmpdir(), "counterpart-cluster-")), "app.config.json");
  writeFileSync(file, JSON.stringify(config));
  return file;
}

export async function waitFor<T>(probe: () => Promise<T | undefined | false> | T | undefined | false, timeoutMs = 5_000, what = "condition"): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Calls `pid` until `count` different workers answered (round-robin makes this quick). */
export async function workerPids(url: string, viewer: Viewer, count = 2, attempts = 20): Promise<Set<number>> {
  const pids = new Set<number>();
  for (let i = 0; i < attempts && pids.size < count; i++) {
    const answer = await rpcCall(url, "plugin/cl/pid", viewer);
    if (answer.status === 200) pids.add(answer.body.result);
  }
  return pids;
}

export function readyLines(stdout: string): string[] {
  return stdout.split("\n").filter((line) => line.includes("listening on"));
}
