#!/usr/bin/env node
// Single-process entrypoint: `node index.js [--port N] [--host H] [--root DIR] [--config FILE] [--dev] [--version]`.
import { main } from "./dist/cli/main.js";

await main();
