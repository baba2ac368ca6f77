// `npm run bench`: every benchmark, each against a baseline measured in the same run.
// The load generator runs in this process on the same machine as the servers: on a 2-core
// machine they share the cores, so ratios matter more than absolute figures.
// `node bench/run.mjs rpc proxy` runs only the named sections.
import { cpus } from "node:os";
import { benchCluster } from "./cluster.mjs";
import { benchProxy } from "./proxy.mjs";
import { benchRpc } from "./rpc.mjs";
import { benchRuntime } from "./runtime.mjs";

const sections = { rpc: benchRpc, runtime: benchRuntime, proxy: benchProxy, cluster: benchCluster };
const chosen = process.argv.slice(2);
for (const name of chosen) {
  if (!Object.hasOwn(sections, name)) {
    console.error(`unknown section "${name}"; known: ${Object.keys(sections).join(", ")}`);
    process.exit(2);
  }
}

console.log(`# Counterpart benchmarks (node ${process.version}, ${cpus().length} CPUs)`);
for (const [name, run] of Object.entries(sections)) {
  if (chosen.length === 0 || chosen.includes(name)) await run();
}
