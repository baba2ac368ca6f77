/**
 * Node's `node:http` module, taken with `require()`, not `import … from "node:http"`: on
 * Node 22 and 24 an ES module import of node:http reads every export, `WebSocket` among
 * them, and that loads Node's bundled undici (fetch, WebSocket, about 1.5 MB of heap) into a
 * server that never uses it (test/app/demo-loads.test.ts). Type-only imports are free.
 */
import { createRequire } from "node:module";

export const nodeHttp = createRequire(import.meta.url)("node:http") as typeof import("node:http");
