// Bytes each RPC echo allocates, by the function that allocates them: the `rpc` section's
// raw node:http handler, bare Fastify route (the same checks) and gateway, each in its own
// process with bench/servers/allocation-sampler.mjs preloaded. WARM calls first, then V8's
// sampling heap profiler (one sample per 256 bytes on average, freed objects included)
// over CALLS calls. A call's garbage costs more than the collector's time: every new object
// is memory the core has not touched yet, which is where the gateway's data-cache misses
// come from (the `instructions` section with BENCH_INSN_CACHE=1). The figures are samples,
// so they move by a few per cent from run to run; the functions at the top do not.
import { existsSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { REPO, gatewayConfigArgs, load, printTable, startProcess, target } from "./lib.mjs";
import { rpcOptions } from "./rpc.mjs";

const WARM = Number(process.env.BENCH_ALLOC_WARM ?? 20_000);
const CALLS = Number(process.env.BENCH_ALLOC_CALLS ?? 20_000);
const TOP = 15;
const SAMPLER = pathToFileURL(join(REPO, "bench/servers/allocation-sampler.mjs")).href;

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** Bytes allocated per call by each function (`name file:line`), and in all. */
function perFunction(profile) {
  const bytes = new Map();
  let total = 0;
  const walk = (node) => {
    const { functionName, url, lineNumber } = node.callFrame;
    const name = `${functionName || "(anonymous)"} ${url.split("/").pop()}:${lineNumber + 1}`;
    bytes.set(name, (bytes.get(name) ?? 0) + node.selfSize / CALLS);
    total += node.selfSize;
    for (const child of node.children ?? []) walk(child);
  };
  walk(profile.head);
  return { bytes, perCall: total / CALLS };
}

async function sample(name, script, args, path) {
  const file = join(tmpdir(), `counterpart-bench-alloc-${process.pid}-${name.replace(/\W+/g, "-")}.json`);
  rmSync(file, { force: true });
  const server = await startProcess(script, args, { BENCH_ALLOC_FILE: file }, "/health", { nodeArgs: ["--import", SAMPLER] });
  try {
    const options = await rpcOptions(server, path);
    const run = async (amount) => {
      const result = await load({ ...options, amount });
      const ok = result.statusCodeStats?.[200]?.count ?? 0;
      if (ok !== amount) throw new Error(`${name}: ${ok} of ${amount} calls answered 200: ${JSON.stringify(result.statusCodeStats)}`);
    };
    await run(WARM);
    server.child.kill("SIGUSR2");
    await sleep(200);
    await run(CALLS);
    server.child.kill("SIGUSR2");
    const deadline = Date.now() + 30_000;
    while (!existsSync(file)) {
      if (Date.now() > deadline) throw new Error(`${name}: the allocation sampler wrote no profile`);
      await sleep(100);
    }
    const profile = JSON.parse(readFileSync(file, "utf8"));
    if (profile.error) throw new Error(`${name}: ${profile.error}`);
    return { name, ...perFunction(profile) };
  } finally {
    await server.stop();
    rmSync(file, { force: true });
    rmSync(`${file}.part`, { force: true });
  }
}

export async function benchAllocations() {
  const servers = join(REPO, "bench/servers");
  const raw = await sample("raw node:http", join(servers, "raw-rpc.mjs"), [], "/rpc");
  const fastify = await sample("bare Fastify route", join(servers, "fastify-rpc.mjs"), [], "/rpc");
  const gateway = await sample("gateway", join(REPO, "index.js"), ["--port", "$PORT", "--root", join(REPO, "bench/app"), ...gatewayConfigArgs()], "/__rpc/plugin/bench/echo");
  const kb = (bytes) => (bytes / 1024).toFixed(1);
  printTable(
    `Bytes allocated per RPC echo (V8's sampling heap profiler, Node ${process.versions.node}): ${CALLS} calls after ${WARM} unsampled`,
    [raw, fastify, gateway].map((row) => ({ server: row.name, "KB per call": kb(row.perCall) })),
  );
  const top = [...gateway.bytes].sort((a, b) => b[1] - a[1]).slice(0, TOP);
  printTable(
    `The gateway's ${TOP} largest allocating functions, bytes per call (the same function in bare Fastify beside it)`,
    top.map(([name, bytes]) => ({ function: name, gateway: Math.round(bytes), "bare Fastify": Math.round(fastify.bytes.get(name) ?? 0) })),
  );
  console.log(`\ngateway / bare Fastify, bytes allocated per call: ${(gateway.perCall / fastify.perCall).toFixed(2)}; gateway / raw: ${(gateway.perCall / raw.perCall).toFixed(2)}`);
  return {
    targets: [
      target("allocations", "gateway bytes allocated per call", gateway.perCall / 1024, {}, { digits: 1, unit: " KB" }),
      target("allocations", "gateway / bare Fastify, bytes allocated per call", gateway.perCall / fastify.perCall),
    ],
  };
}
