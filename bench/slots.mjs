// What a deployment-wide concurrency slot (`concurrencyScope: "deployment"`, docs/guides/deployment.md
// "Shared state and Redis") costs per call: one gateway process with `server.redis` set,
// the same echo without a limit, with a per-process limit and with a deployment-wide one,
// both limits far above the 50 connections so that no call waits (bench/slots-app). A real
// redis-server, started here with no persistence, runs on the load core (it stands for a
// Redis on another machine: its CPU is not the gateway's), the gateway on the server core;
// autocannon loads, interleaved rounds (lib.mjs). Redis's own CPU µs per slot is measured
// in one more round of the deployment-wide method alone.
// Reported, no targets: the gateway's extra CPU µs per call and the req/s ratio.
import { join } from "node:path";
import {
  REPO,
  ROUNDS,
  ROUND_SEC,
  borrowed,
  cpuMicros,
  interleaved,
  load,
  printTable,
  ratio,
  startProcess,
  summary,
  target,
} from "./lib.mjs";
import { rpcOptions } from "./rpc.mjs";
import { startRedis } from "./redis.mjs";

const PATH = "/__rpc/plugin/bench/";

export async function benchSlots() {
  const redis = await startRedis();
  let gateway;
  try {
    gateway = await startProcess(join(REPO, "index.js"), ["--port", "$PORT", "--root", join(REPO, "bench/slots-app")], { BENCH_REDIS_URL: redis.url });
    const shared = async () => borrowed(gateway);
    const contenders = [
      { name: "no limit", path: "echo" },
      { name: "maxConcurrency, process scope", path: "limitedHere" },
      { name: "maxConcurrency, deployment scope (Redis)", path: "limitedDeploymentWide" },
    ].map(({ name, path }) => ({ name, start: shared, options: (server) => rpcOptions(server, PATH + path) }));
    const rows = await interleaved(contenders);
    printTable(`A deployment-wide slot per call, one gateway process, 50 connections, median of ${ROUNDS} interleaved ${ROUND_SEC}-second rounds`, rows);

    // Redis's side: its CPU time over one more round of the deployment-wide method alone.
    const options = await rpcOptions(gateway, PATH + "limitedDeploymentWide");
    const redisBefore = cpuMicros(redis.pid);
    const result = await load({ ...options, duration: ROUND_SEC });
    const redisUsPerCall = (cpuMicros(redis.pid) - redisBefore) / result.requests.total;

    const [free, here, deployment] = rows;
    const extraUs = deployment.cpuUsPerReq - here.cpuUsPerReq;
    console.log("");
    console.log(`deployment scope - process scope, gateway CPU µs per call: ${extraUs.toFixed(1)} (${deployment.cpuUsPerReq.toFixed(1)} / ${here.cpuUsPerReq.toFixed(1)}; no limit ${free.cpuUsPerReq.toFixed(1)})`);
    console.log(`deployment scope / process scope: CPU per call ${ratio(deployment.cpuUsPerReq, here.cpuUsPerReq)}, req/s ${ratio(deployment.reqPerSec, here.reqPerSec)}`);
    console.log(`redis-server CPU µs per deployment-wide call: ${redisUsPerCall.toFixed(1)} (one ${ROUND_SEC}-second round, ${summary(result).reqPerSec} req/s)`);
    return {
      rows,
      targets: [
        target("slots", "deployment-wide slot, extra gateway CPU µs per call (over process scope)", extraUs, {}, { digits: 1 }),
        target("slots", "deployment scope / process scope, gateway CPU µs per call", deployment.cpuUsPerReq / here.cpuUsPerReq),
        target("slots", "deployment scope / process scope, req/s", deployment.reqPerSec / here.reqPerSec),
        target("slots", "redis-server CPU µs per deployment-wide call", redisUsPerCall, {}, { digits: 1 }),
      ],
    };
  } finally {
    await gateway?.stop();
    await redis.stop();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await benchSlots();
