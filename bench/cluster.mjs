// Issue 7 benchmark: the RPC echo on `node cluster-index.js` with 2 workers against the
// single process (`node index.js`), in the same run. The load generator (autocannon) runs in
// this process on the same machine: on a 2-core machine it competes with the two workers
// for the cores, so the ratio there understates what the cluster gives on a larger host.
import { cpus } from "node:os";
import { join } from "node:path";
import { REPO, load, printTable, ratio, startProcess, summary, viewerSession } from "./lib.mjs";

const BODY = JSON.stringify({ args: [{ message: "hello, gateway", n: 42, ok: true }] });
const PATH = "/__rpc/plugin/bench/echo";
const WORKERS = 2;

async function measure(name, server) {
  try {
    const { cookie, csrf } = await viewerSession(server.url);
    const headers = { cookie, "x-app-csrf": csrf, "content-type": "application/json" };
    // The warm-up also lets the last worker of the cluster finish starting.
    await load({ url: server.url + PATH, method: "POST", headers, body: BODY, duration: 2 });
    return { name, ...summary(await load({ url: server.url + PATH, method: "POST", headers, body: BODY })) };
  } finally {
    await server.stop();
  }
}

export async function benchCluster() {
  const args = ["--port", "$PORT", "--root", join(REPO, "bench/app")];
  const single = await measure("index.js (1 process)", await startProcess(join(REPO, "index.js"), args));
  const clustered = await measure(
    `cluster-index.js (${WORKERS} workers)`,
    await startProcess(join(REPO, "cluster-index.js"), args, { APP_WORKERS: String(WORKERS) }),
  );
  printTable(`RPC echo, ${BODY.length}-byte body, 50 connections: cluster vs single process`, [single, clustered]);
  console.log(`\ncluster / single req/s: ${ratio(clustered.reqPerSec, single.reqPerSec)}`);
  console.log(
    `note: ${cpus().length} CPUs here; the load generator runs on the same machine and shares them with the workers` +
      (cpus().length <= 2 ? "; on 2 cores the ratio understates what the cluster gives on a larger host" : ""),
  );
  return { single, cluster: clustered };
}

if (import.meta.url === `file://${process.argv[1]}`) await benchCluster();
