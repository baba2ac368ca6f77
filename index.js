#!/usr/bin/env node
// Single-process entrypoint: `node index.js [--port N] [--host H] [--root DIR] [--config FILE] [--dev] [--version]`.
// Before the rest loads and the heap grows (src/core/young-generation.ts).
import { limitYoungGeneration } from "./dist/core/young-generation.js";

limitYoungGeneration();
const { main } = await import("./dist/cli/main.js");

await main();
