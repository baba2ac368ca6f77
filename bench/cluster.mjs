// The RPC echo on `node cluster-index.js` with 2 workers against one process (`node index.js`),
// in the same run, interleaved rounds, 50 connections, the same ~60-byte body. Both are pinned
// to the server cores (BENCH_SERVER_CPUS, default CPU 1: master and workers inherit the
// pinning), autocannon to the load core (lib.mjs). CPU per request sums the master and every
// worker. On one server core the workers cannot run in parallel, so req/s shows what the
// cluster costs rather than what it gains; give it more cores (BENCH_SERVER_CPUS=1-3 on a
// larger host) to see it scale.
import { join } from "node:path";
import { REPO, ROUNDS, ROUND_SEC, interleaved, pinning, printTable, ratio, startProcess, target } from "./lib.mjs";
import { rpcOptions } from "./rpc.mjs";

const PATH = "/__rpc/plugin/bench/echo";
const WORKERS = Number(process.env.BENCH_CLUSTER_WORKERS ?? 2);

export async function benchCluster() {
  const args = ["--port", "$PORT", "--root", join(REPO, "bench/app")];
  const options = (server) => rpcOptions(server, PATH);
  // interleaved()'s warm-up also lets the last worker of the cluster finish starting.
  const [single, clustered] = await interleaved([
    { name: "index.js (1 process)", start: () => startProcess(join(REPO, "index.js"), args), options },
    { name: `cluster-index.js (${WORKERS} workers)`, start: () => startProcess(join(REPO, "cluster-index.js"), args, { APP_WORKERS: String(WORKERS) }), options },
  ]);
  printTable(`RPC echo, 50 connections: cluster vs single process, median of ${ROUNDS} interleaved ${ROUND_SEC}-second rounds`, [single, clustered]);
  console.log(`\ncluster / single req/s: ${ratio(clustered.reqPerSec, single.reqPerSec)}`);
  console.log(`cluster / single, CPU per request (master + workers): ${ratio(clustered.cpuUsPerReq, single.cpuUsPerReq)}`);
  const pins = pinning();
  console.log(`note: servers on CPU ${pins.enabled ? pins.serverCpus : "(unpinned)"}; with a single server core the ratio shows the cluster's overhead, not its scaling`);
  return {
    single,
    cluster: clustered,
    targets: [
      target("cluster", `cluster (${WORKERS} workers) / single, req/s`, clustered.reqPerSec / single.reqPerSec),
      target("cluster", `cluster (${WORKERS} workers) / single, CPU µs per request`, clustered.cpuUsPerReq / single.cpuUsPerReq),
    ],
  };
}

if (import.meta.url === `file://${process.argv[1]}`) await benchCluster();
