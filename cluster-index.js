#!/usr/bin/env node
// Clustered entrypoint: `node cluster-index.js [--port N] [--host H] [--root DIR] [--config FILE] [--dev] [--version]`,
// a master and APP_WORKERS workers (default: the number of CPUs) sharing one port.
import { main } from "./dist/cluster/main.js";

await main();
