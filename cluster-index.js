#!/usr/bin/env node
// Clustered entrypoint: `node cluster-index.js [--port N] [--host H] [--root DIR] [--config FILE] [--dev] [--version]`,
// a master and APP_WORKERS workers (default: the number of CPUs) sharing one port.
// Before the rest loads and the heap grows (src/core/young-generation.ts).
import { limitYoungGeneration } from "./dist/core/young-generation.js";

limitYoungGeneration();
const { main } = await import("./dist/cluster/main.js");

await main();
