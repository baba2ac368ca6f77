/** Runs the real entrypoints (`node index.js`, `node cluster-index.js`) as child processes. */
import { spawn, type ChildProcess } from "node:child_process";
import { join, resolve } from "node:path";
import { afterAll, expect } from "vitest";
import { configFile } from "./app-root.js";
import { TEST_SESSION_SECRET } from "./server.js";

export const REPO = join(import.meta.dirname, "../..");

export interface RunningProcess {
  child: ChildProcess;
  url: string;
  stdout: () => string;
  stderr: () => string;
  /** Resolves with the exit code once the process ends. */
  exited: Promise<number | null>;
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

export function spawnEntrypoint(args: string[], env: Record<string, string> = {}, entry = "index.js") {
  const child = spawn(process.execPath, [resolve(REPO, entry), ...args], {
    cwd: REPO,
    env: { PATH: process.env.PATH ?? "", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  let err = "";
  child.stdout!.on("data", (chunk: Buffer) => (out += chunk.toString("utf8")));
  child.stderr!.on("data", (chunk: Buffer) => (err += chunk.toString("utf8")));
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
  return { child, exited, stdout: () => out, stderr: () => err };
}

/** Runs to completion (for start-up failures and `--version`), killed after `timeoutMs`. */
export async function runToExit(args: string[], env: Record<string, string> = {}, timeoutMs = 15_000, entry = "index.js") {
  const run = spawnEntrypoint(args, env, entry);
  const timer = setTimeout(() => run.child.kill("SIGKILL"), timeoutMs);
  const code = await run.exited;
  clearTimeout(timer);
  return { code, stdout: run.stdout(), stderr: run.stderr() };
}

/**
 * Runs `node index.js` (on port 0 unless `args` name one) and expects it to refuse to start
 * as docs/guides/your-app.md says: exit 1 and one `counterpart: ` line on stderr that matches
 * `message`, no stack trace, never a ready line.
 */
export async function expectStartupFailure(message: RegExp, args: string[], env: Record<string, string> = {}) {
  const result = await runToExit(args.includes("--port") ? args : [...args, "--port", "0"], env);
  expect(result.code).toBe(1);
  const lines = result.stderr.trim().split("\n");
  expect(lines[0]).toMatch(message);
  expect(lines[0]).toMatch(/^counterpart: /);
  expect(result.stderr).not.toMatch(/\n\s+at /);
  expect(result.stdout).not.toContain("listening on");
  return result;
}

/** Starts and waits for the ready line ("listening on <url>"). */
export async function startEntrypoint(
  args: string[],
  env: Record<string, string> = {},
  entry = "index.js",
  timeoutMs = 20_000,
): Promise<RunningProcess> {
  const run = spawnEntrypoint(args, env, entry);
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no ready line in ${timeoutMs} ms:\n${run.stdout()}\n${run.stderr()}`)), timeoutMs);
    const check = () => {
      const match = /listening on (http:\/\/[^\s"]+)/.exec(run.stdout());
      if (match) {
        clearTimeout(timer);
        resolve(match[1]!);
      }
    };
    run.child.stdout!.on("data", check);
    run.exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`exited with ${code} before ready:\n${run.stdout()}\n${run.stderr()}`));
    });
  });
  return {
    ...run,
    url,
    async stop(signal: NodeJS.Signals = "SIGTERM") {
      if (run.child.exitCode !== null) return run.child.exitCode;
      run.child.kill(signal);
      return run.exited;
    },
  };
}

/**
 * Starts `node <entry>` processes on one app root with `config()` as their app.config.json
 * (a function: a Redis a test starts has its URL only once started) and the tests' session
 * secret, so that one viewer's session holds on every one; each is killed after the tests.
 */
export function useEntrypoints(root: string, config: () => unknown, entry = "index.js", env: Record<string, string> = {}): () => Promise<RunningProcess> {
  const running: RunningProcess[] = [];
  afterAll(async () => {
    await Promise.all(running.map((run) => run.stop("SIGKILL")));
  });
  return async () => {
    const args = ["--port", "0", "--root", root, "--config", configFile(config())];
    const run = await startEntrypoint(args, { APP_SESSION_SECRET: TEST_SESSION_SECRET, ...env }, entry);
    running.push(run);
    return run;
  };
}
