/**
 * A real redis-server (Debian's package) on a free loopback port, with no persistence and
 * its files in a temp folder: for the shared state of docs/guides/deployment.md "Shared state and
 * Redis". It can be killed (SIGKILL) and restarted on the same port, as an outage is.
 * Without redis-server the tests are skipped, except under CI=true, where they must run.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe } from "vitest";
import { closedPort } from "./http.js";

export const REDIS_SERVER_PATH = process.env.REDIS_SERVER_PATH ?? "/usr/bin/redis-server";
const redisFound = existsSync(REDIS_SERVER_PATH);

/** `describe`, or `describe.skip` when redis-server is missing outside CI (under CI=true it must run). */
export const describeWithRedis: typeof describe = redisFound || process.env.CI === "true" ? describe : (describe.skip as typeof describe);

export interface RedisServer {
  readonly port: number;
  /** `redis://127.0.0.1:<port>`. */
  readonly url: string;
  /** Whether it is running now. */
  readonly running: boolean;
  /** SIGKILL: every connection drops, and with no persistence every key is gone. */
  kill(): Promise<void>;
  /** Starts it again on the same port (killing it first if it runs). */
  restart(): Promise<void>;
  /** Stops it for good and removes its folder. */
  stop(): Promise<void>;
}

export async function startRedis(extraArgs: string[] = []): Promise<RedisServer> {
  if (!redisFound) throw new Error(`redis-server not found at ${REDIS_SERVER_PATH}: install it (apt-get install redis-server) or set REDIS_SERVER_PATH`);
  const dir = await mkdtemp(join(tmpdir(), "redis-"));
  const port = await closedPort();
  let child: ChildProcess | null = null;

  const launch = async () => {
    const args = ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", dir, ...extraArgs];
    const started = spawn(REDIS_SERVER_PATH, args, { stdio: ["ignore", "ignore", "pipe"] });
    let stderr = "";
    started.stderr?.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    child = started;
    const deadline = Date.now() + 5_000;
    while (!(await pings(port))) {
      if (started.exitCode !== null) throw new Error(`redis-server exited: ${stderr}`);
      if (Date.now() > deadline) throw new Error(`redis-server did not answer PING on port ${port}: ${stderr}`);
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
  };
  const kill = async () => {
    const running = child;
    child = null;
    if (!running || running.exitCode !== null) return;
    const exited = new Promise((resolve) => running.once("exit", resolve));
    running.kill("SIGKILL");
    await exited;
  };

  await launch();
  return {
    port,
    url: `redis://127.0.0.1:${port}`,
    get running() {
      return child !== null && child.exitCode === null;
    },
    kill,
    async restart() {
      await kill();
      await launch();
    },
    async stop() {
      await kill();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** The Redis of a test file or `describe`: started before its tests, stopped after them. */
export function useRedis(extraArgs: string[] = []): RedisServer {
  let server: RedisServer | undefined;
  beforeAll(async () => {
    server = await startRedis(extraArgs);
  });
  afterAll(() => server?.stop());
  const get = (): RedisServer => {
    if (!server) throw new Error("Redis is not started yet (use it inside a test or hook)");
    return server;
  };
  return {
    get port() {
      return get().port;
    },
    get url() {
      return get().url;
    },
    get running() {
      return get().running;
    },
    kill: () => get().kill(),
    restart: () => get().restart(),
    stop: () => get().stop(),
  };
}

/** True when a plain `PING` on a fresh connection answers `+PONG` (with `-NOAUTH`: up, but locked). */
function pings(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, "127.0.0.1");
    let reply = "";
    const done = (up: boolean) => {
      socket.destroy();
      resolve(up);
    };
    socket.setTimeout(500, () => done(false));
    socket.on("error", () => done(false));
    socket.on("connect", () => socket.write("PING\r\n"));
    socket.on("data", (chunk: Buffer) => {
      reply += chunk.toString();
      if (reply.includes("+PONG") || reply.includes("-NOAUTH")) done(true);
    });
  });
}
