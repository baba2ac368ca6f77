// What `npm start` holds in memory once it serves (docs/reference/benchmarks.md "Benchmarks", memory): the bundled
// demo, through its page, its files and a few calls, loads none of the parts its
// traffic has not used yet. Each is loaded when first needed, and the tests of each feature
// show it still works then.
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { expect, it } from "vitest";
import { closedPort, openViewer, rpc } from "../helpers/http.js";
import { REPO, startEntrypoint } from "../helpers/process.js";

const RECORD_LOADS = pathToFileURL(join(import.meta.dirname, "../fixtures/scripts/record-loads.mjs")).href;

/** Every module `node index.js` loaded (ES module URLs, `cjs:` files, `builtin:` names) through a page, files and calls. */
async function demoLoads(): Promise<string[]> {
  const record = join(mkdtempSync(join(tmpdir(), "counterpart-demo-loads-")), "loads.txt");
  const server = await startEntrypoint(["--port", "0"], {
    APP_SESSION_SECRET: "demo-loads-test-session-secret-32-bytes",
    DEMO_UPSTREAM_PORT: String(await closedPort()),
    NODE_OPTIONS: `--import=${RECORD_LOADS}`,
    RECORD_LOADS_TO: record,
  });
  try {
    const viewer = await openViewer(server.url);
    for (const path of ["/__app/client.js", "/style.css"]) expect((await fetch(server.url + path)).status).toBe(200);
    const script = await fetch(`${server.url}/app.js`, { headers: { "accept-encoding": "gzip" } });
    expect([script.status, script.headers.get("content-encoding")]).toEqual([200, "gzip"]);
    expect((await rpc(server.url, "plugin/greeter/greet", { viewer, body: { args: [{ name: "Ada" }] } })).status).toBe(200);
    expect((await rpc(server.url, "module/clock/now", { viewer })).status).toBe(200);
  } finally {
    expect(await server.stop()).toBe(0);
  }
  return readFileSync(record, "utf8").split("\n");
}

it("npm start loads neither Node's bundled undici nor jose until something needs them", async () => {
  const loaded = await demoLoads();
  // The record works: the server's own modules, Fastify and node:http are there.
  expect(loaded.some((line) => line.endsWith("/dist/app/create-server.js"))).toBe(true);
  expect(loaded.some((line) => line.startsWith("cjs:") && line.includes("/node_modules/fastify/fastify.js"))).toBe(true);
  expect(loaded).toContain("builtin:NativeModule http");
  // Node's bundled undici is fetch's and WebSocket's; an ES module import of node:http
  // loads it on Node 22 and 24.
  expect(loaded.filter((line) => line.includes("internal/deps/undici"))).toEqual([]);
  expect(loaded.filter((line) => line.includes("/node_modules/jose/"))).toEqual([]);
  // Pages and files were compressed (fetch asks for gzip), without mime-db's table.
  expect(loaded.filter((line) => line.includes("/node_modules/mime-db/"))).toEqual([]);
});
