// `npm run bench`: every benchmark, each against a baseline measured in the same run.
// The load generator runs in this process on the same machine as the servers: on a 2-core
// machine they share the cores, so ratios matter more than absolute figures.
import { benchRpc } from "./rpc.mjs";

console.log(`# Counterpart benchmarks (node ${process.version}, ${(await import("node:os")).cpus().length} CPUs)`);
await benchRpc();
