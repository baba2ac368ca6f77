// What loads the testing entry, and what it needs: a normal server start never loads it
// nor Fastify's inject (light-my-request); importing it installs APP_SERVER for server
// files that read it at load; a Node that cannot require() an ES module gets one clear error.
import { execFile } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, relative, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { openViewer, rpc } from "../helpers/http.js";
import { REPO, startEntrypoint } from "../helpers/process.js";

const run = promisify(execFile);
const SCRIPTS = join(import.meta.dirname, "../fixtures/scripts");
const SRC = join(REPO, "src");

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? sourceFiles(path) : name.endsWith(".ts") ? [path] : [];
  });
}

describe("the testing entry", () => {
  it("is imported by no source file outside src/testing/", () => {
    const importers = sourceFiles(SRC)
      .filter((file) => !relative(SRC, file).startsWith("testing/"))
      .filter((file) =>
        [...readFileSync(file, "utf8").matchAll(/(?:\bfrom\s+|\bimport\s*\(?\s*)"(\.{1,2}\/[^"]+)"/g)].some((match) =>
          relative(SRC, resolve(dirname(file), match[1]!)).startsWith("testing/"),
        ),
      );
    expect(importers.map((file) => relative(SRC, file))).toEqual([]);
  });

  it("is never loaded by `node index.js`, nor is Fastify's inject, through a page and a call", async () => {
    const record = join(mkdtempSync(join(tmpdir(), "counterpart-loads-")), "loads.txt");
    const server = await startEntrypoint(["--port", "0", "--root", join(REPO, "test/fixtures/stream-app")], {
      APP_SESSION_SECRET: "loading-test-session-secret-of-32-bytes",
      NODE_OPTIONS: `--import=${pathToFileURL(join(SCRIPTS, "record-loads.mjs")).href}`,
      RECORD_LOADS_TO: record,
    });
    try {
      const viewer = await openViewer(server.url);
      expect((await rpc(server.url, "plugin/ticker/echo", { viewer, body: { args: [1] } })).status).toBe(200);
    } finally {
      expect(await server.stop()).toBe(0);
    }
    const loaded = readFileSync(record, "utf8").split("\n");
    // Both halves of the record work: the server's own modules and Fastify (CommonJS) are there.
    expect(loaded.some((line) => line.endsWith("/dist/app/create-server.js"))).toBe(true);
    expect(loaded.some((line) => line.startsWith("cjs:") && line.includes("/node_modules/fastify/fastify.js"))).toBe(true);
    expect(loaded.filter((line) => line.includes("/dist/testing/") || line.includes("light-my-request"))).toEqual([]);
  });

  it("installs APP_SERVER on import, so a server file may read it as it loads", async () => {
    const { stdout } = await run(process.execPath, [join(SCRIPTS, "testing-entry.mjs")], { cwd: REPO });
    expect(JSON.parse(stdout)).toEqual({ atLoad: "RpcError", thrown: { name: "RpcError", code: "TEAPOT" }, started: true });
  });

  // Node 20.18 cannot require() an ES module; Fastify's inject require()s light-my-request,
  // which the package pins to a release whose cookie is CommonJS (docs/reference/project.md "Dependencies").
  it("starts a test app on a Node that cannot require() an ES module, as Node 20.18", async () => {
    const { stdout } = await run(process.execPath, ["--no-experimental-require-module", join(SCRIPTS, "testing-entry.mjs")], { cwd: REPO });
    expect(JSON.parse(stdout)).toEqual({ atLoad: "RpcError", thrown: { name: "RpcError", code: "TEAPOT" }, started: true });
  });
});
