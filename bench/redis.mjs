// A real redis-server for the benchmarks that need one (bench/slots.mjs, bench/session.mjs,
// bench/ratelimit.mjs), started with no persistence on a free port and pinned to the load
// core: it stands for a Redis on another machine, whose CPU is not the gateway's.
import { spawn } from "node:child_process";
import { connect } from "node:net";
import { join } from "node:path";
import { REPO, freePort, gatewayConfigArgs, pinnedCommand, startProcess } from "./lib.mjs";
import { startGateway } from "./rpc.mjs";

const REDIS_SERVER = process.env.REDIS_SERVER_PATH ?? "/usr/bin/redis-server";

/** redis-server on a free port, pinned to the load core; resolves once it answers PING. */
export async function startRedis() {
  const port = await freePort();
  const [command, args] = pinnedCommand("load", REDIS_SERVER, ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"]);
  const child = spawn(command, args, { stdio: "ignore" });
  const deadline = Date.now() + 5_000;
  while (!(await answersPing(port))) {
    if (Date.now() > deadline || child.exitCode !== null) throw new Error(`${REDIS_SERVER} did not start`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return {
    url: `redis://127.0.0.1:${port}`,
    pid: child.pid,
    async stop() {
      if (child.exitCode !== null) return;
      child.kill("SIGKILL");
      await new Promise((resolve) => child.once("exit", resolve));
    },
  };
}

/**
 * Runs `measure({ memory, shared, redis })` against two gateways on bench/app: `memory` keeps
 * its state in its own process, `shared` in a redis-server started here
 * (bench/app-redis.config.json); stops all three afterwards, whatever `measure` does.
 */
export async function withMemoryAndRedisGateways(measure) {
  const redis = await startRedis();
  let memory;
  let shared;
  try {
    memory = await startGateway();
    shared = await startProcess(join(REPO, "index.js"), ["--port", "$PORT", "--root", join(REPO, "bench/app"), ...gatewayConfigArgs(join(REPO, "bench/app-redis.config.json"))], {
      BENCH_REDIS_URL: redis.url,
    });
    return await measure({ memory, shared, redis });
  } finally {
    await memory?.stop();
    await shared?.stop();
    await redis.stop();
  }
}

/** One PING over a fresh connection: true once the server answers PONG. */
function answersPing(port) {
  return new Promise((resolve) => {
    const socket = connect(port, "127.0.0.1");
    let reply = "";
    const done = (ok) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(500, () => done(false));
    socket.on("error", () => done(false));
    socket.on("connect", () => socket.write("PING\r\n"));
    socket.on("data", (chunk) => {
      reply += chunk.toString();
      if (reply.includes("\r\n")) done(reply.startsWith("+PONG"));
    });
  });
}
