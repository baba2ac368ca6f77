// `npm run bench`: every benchmark, each against a baseline measured in the same run, then a
// summary of every target with its measured value. `node bench/run.mjs rpc refusals headers static slots stream proxy memory`
// runs only the named sections (also instructions, allocations, validation, ratelimit, files, cluster). Servers run pinned to one core, this process (the load
// generator) to another (lib.mjs, pinning()); without taskset or a second CPU it warns and
// runs unpinned.
// Lengths: BENCH_ROUNDS rounds (5) of BENCH_ROUND_SEC seconds (3) per contender after
// BENCH_WARMUP_SEC (2); BENCH_DURATION_SEC (8) for the runtime section's loads;
// BENCH_MEMORY_CALLS (100 000) for the growth check.
import { cpus } from "node:os";
import { benchCluster } from "./cluster.mjs";
import { pinning, printPinning, printTable, worstNoise } from "./lib.mjs";
import { benchMemory } from "./memory.mjs";
import { benchProxy } from "./proxy.mjs";
import { benchRefusals } from "./refusals.mjs";
import { benchRpc } from "./rpc.mjs";
import { benchRuntime } from "./runtime.mjs";
import { benchSlots } from "./slots.mjs";
import { benchStream } from "./stream.mjs";
import { benchHeaders } from "./headers.mjs";
import { benchInstructions } from "./instructions.mjs";
import { benchAllocations } from "./allocations.mjs";
import { benchStatic } from "./static.mjs";
import { benchSession } from "./session.mjs";
import { benchFiles } from "./files.mjs";
import { benchValidation } from "./validation.mjs";
import { benchRateLimit } from "./ratelimit.mjs";

const sections = {
  rpc: benchRpc,
  refusals: benchRefusals,
  // Under valgrind: counts, not time, so it runs alone without disturbing the others.
  instructions: benchInstructions,
  allocations: benchAllocations,
  validation: benchValidation,
  ratelimit: benchRateLimit,
  headers: benchHeaders,
  static: benchStatic,
  runtime: benchRuntime,
  slots: benchSlots,
  stream: benchStream,
  session: benchSession,
  proxy: benchProxy,
  files: benchFiles,
  // Reuses the proxy section's 1 GiB download when it ran, instead of measuring it twice.
  memory: (results) => benchMemory({ proxyDownload: results.proxy?.download }),
  cluster: benchCluster,
};
const chosen = process.argv.slice(2);
for (const name of chosen) {
  if (!Object.hasOwn(sections, name)) {
    console.error(`unknown section "${name}"; known: ${Object.keys(sections).join(", ")}`);
    process.exit(2);
  }
}

console.log(`# Counterpart benchmarks (node ${process.version}, ${cpus().length} CPUs)`);
printPinning();
const results = {};
for (const [name, run] of Object.entries(sections)) {
  if (chosen.length === 0 || chosen.includes(name)) results[name] = await run(results);
}

// One row per target, grouped by section; the proxy's memory figure appears once even when
// both the proxy and the memory sections report it.
const seen = new Set();
const rows = [];
for (const result of Object.values(results)) {
  for (const row of result.targets ?? []) {
    const key = `${row.section}/${row.measure}`;
    if (!seen.has(key)) seen.add(key), rows.push(row);
  }
}
const order = Object.keys(sections);
rows.sort((a, b) => order.indexOf(a.section) - order.indexOf(b.section));
if (rows.length > 0) printTable("Summary: every target", rows);
if (pinning().enabled) {
  console.log(`\nother processes took up to ${worstNoise().toFixed(0)} % of the server core in a round (interleaved sections); above a few %, take the figures again on a quiet machine.`);
}
console.log(pinning().note);
