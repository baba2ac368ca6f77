// `npm run bench`: every benchmark, each against a baseline measured in the same run.
// The load generator runs in this process on the same machine as the servers: on a 2-core
// machine they share the cores, so ratios matter more than absolute figures.
import { cpus } from "node:os";
import { benchRpc } from "./rpc.mjs";
import { benchRuntime } from "./runtime.mjs";

console.log(`# Counterpart benchmarks (node ${process.version}, ${cpus().length} CPUs)`);
await benchRpc();
await benchRuntime();
