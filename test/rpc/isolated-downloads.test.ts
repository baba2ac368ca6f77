// docs/guides/files.md "Files and binary data", downloads from isolated methods: a method that runs in a
// worker thread returns APP_SERVER.file with any source (bytes, a Node or Web stream, a
// file of its item or of ctx.tempDir()), and the answer is the same as an inline method's:
// a stream read in the worker and sent with backpressure (a reader that stops holds it), a
// reader that leaves ends it in the worker, and timeoutMs covers the method, not the body.
import { mkdirSync, mkdtempSync, readdirSync, readFileSync } from "node:fs";
import { request as httpRequest, type IncomingMessage } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

mkdirSync(join(tmpdir(), "counterpart-isolated-download-tests"), { recursive: true });
process.env.TMPDIR = mkdtempSync(join(tmpdir(), "counterpart-isolated-download-tests", "run-"));

const { useServer } = await import("../helpers/server.js");
const { tempApp } = await import("../helpers/app-root.js");
const { rpc } = await import("../helpers/http.js");
const { waitFor } = await import("../helpers/wait.js");

// What the worker's endless source did, written where the test can read it: the worker
// that runs it is not one a second call could reach.
const progressFile = join(process.env.TMPDIR, "progress.json");

const METHODS = `
import { Readable } from "node:stream";
import { writeFileSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
const worker = { auth: { public: true }, runtime: { isolation: "worker" } };
export const policy = {
  bytes: worker, nodeStream: worker, webStream: worker, itemFile: worker, outside: worker, tempFile: worker, endless: worker, empty: worker,
  slowBody: { auth: { public: true }, runtime: { isolation: "worker", timeoutMs: 300 } },
  stuck: { auth: { public: true }, runtime: { isolation: "worker", timeoutMs: 300 } },
};
export function bytes() { return APP_SERVER.file(new TextEncoder().encode("a,b\\n1,2\\n"), { type: "text/csv; charset=utf-8", name: "report.csv" }); }
export function nodeStream() {
  let left = 40;
  return APP_SERVER.file(new Readable({ read() { this.push(left-- > 0 ? Buffer.alloc(128 * 1024, 120) : null); } }), { name: "n.bin" });
}
export function webStream() {
  let left = 3;
  return APP_SERVER.file(new ReadableStream({ pull(c) { if (left-- > 0) c.enqueue(new TextEncoder().encode("chunk;")); else c.close(); } }), { type: "text/plain" });
}
export function empty() { return APP_SERVER.file(new Readable({ read() { this.push(null); } }), { type: "text/plain" }); }
export function itemFile() { return APP_SERVER.file("data/report.txt", { type: "text/plain", name: "report.txt" }); }
export function outside() { return APP_SERVER.file("../../../../../../etc/hostname", { type: "text/plain" }); }
export async function tempFile(ctx) {
  const path = join(await ctx.tempDir(), "export.txt");
  await writeFile(path, "made in a worker");
  return APP_SERVER.file(path, { type: "text/plain", name: "export.txt" });
}
export function endless(_ctx, input) {
  let produced = 0;
  const block = Buffer.alloc(64 * 1024, 97);
  return APP_SERVER.file(new Readable({
    read() { produced += block.length; writeFileSync(input.progress, JSON.stringify({ produced, destroyed: false })); this.push(Buffer.from(block)); },
    destroy(error, done) { writeFileSync(input.progress, JSON.stringify({ produced, destroyed: true })); done(error); },
  }), { name: "endless.bin" });
}
// Makes its folder, then never returns and ignores its signal: the worker is terminated.
export async function stuck(ctx) {
  await writeFile(join(await ctx.tempDir(), "half.txt"), "half an export");
  await new Promise(() => {});
}
export async function slowBody() {
  let left = 8;
  return APP_SERVER.file(new Readable({ read() { setTimeout(() => this.push(left-- > 0 ? "tick;" : null), 100); } }), { type: "text/plain" });
}
`;

const root = tempApp({ files: { "plugins/p/p.server.mjs": METHODS, "plugins/p/data/report.txt": "the report\n" } });
const callFolders = () => readdirSync(process.env.TMPDIR!).filter((name) => name.startsWith("counterpart-call-"));
const progress = () => JSON.parse(readFileSync(progressFile, "utf8")) as { produced: number; destroyed: boolean };
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe("file answers of isolated methods", () => {
  const app = useServer({ root });
  const eventOf = (method: string) => waitFor(() => app.logs.events().filter((event) => event.method === method).at(-1));

  it("answers bytes with their headers", async () => {
    const answer = await rpc(app.url, "plugin/p/bytes");
    expect([answer.status, answer.body, answer.headers.get("content-type"), answer.headers.get("content-length")]).toEqual([200, "a,b\n1,2\n", "text/csv; charset=utf-8", "8"]);
    expect(answer.headers.get("content-disposition")).toBe(`attachment; filename="report.csv"; filename*=UTF-8''report.csv`);
    expect(await eventOf("bytes")).toMatchObject({ event: "rpc.complete", status: 200, bytes: 8 });
  });

  it("streams Node and Web streams read in the worker, and an empty one", async () => {
    const node = await fetch(`${app.url}/__rpc/plugin/p/nodeStream`, { method: "POST" });
    expect([node.status, node.headers.get("content-type"), node.headers.get("content-length")]).toEqual([200, "application/octet-stream", null]);
    const body = new Uint8Array(await node.arrayBuffer());
    expect([body.byteLength, body.every((byte) => byte === 120)]).toEqual([40 * 128 * 1024, true]);
    expect(await eventOf("nodeStream")).toMatchObject({ event: "rpc.complete", bytes: 40 * 128 * 1024 });
    expect((await rpc(app.url, "plugin/p/webStream")).body).toBe("chunk;chunk;chunk;");
    const empty = await fetch(`${app.url}/__rpc/plugin/p/empty`, { method: "POST" });
    expect([empty.status, empty.headers.get("content-type"), await empty.text()]).toEqual([200, "text/plain", ""]);
  });

  it("answers a file of its item, refuses one outside it, and a file of ctx.tempDir() made in the worker, then removes that folder", async () => {
    const item = await rpc(app.url, "plugin/p/itemFile");
    expect([item.status, item.body, item.headers.get("content-length")]).toEqual([200, "the report\n", "11"]);
    const outside = await rpc(app.url, "plugin/p/outside");
    expect([outside.status, outside.body.code]).toEqual([500, "RPC_INTERNAL_ERROR"]);
    const temp = await rpc(app.url, "plugin/p/tempFile");
    expect([temp.status, temp.body, temp.headers.get("content-length")]).toEqual([200, "made in a worker", "16"]);
    await waitFor(() => callFolders().length === 0, 2000, "the call's folder to go");
  });

  it("holds the source in the worker while the reader stops, and ends it there when the reader leaves", async () => {
    const target = new URL(app.url);
    const body = JSON.stringify({ args: [{ progress: progressFile }] });
    const response = await new Promise<IncomingMessage>((resolve, reject) => {
      const req = httpRequest({ host: target.hostname, port: target.port, path: "/__rpc/plugin/p/endless", method: "POST", headers: { "content-type": "application/json" } }, resolve);
      req.on("error", reject);
      req.end(body);
    });
    expect(response.statusCode).toBe(200);
    response.pause();
    await pause(500);
    const held = progress().produced;
    await pause(300);
    expect(progress()).toEqual({ produced: held, destroyed: false });
    expect(held).toBeLessThan(8 * 1024 * 1024);
    response.destroy();
    await waitFor(() => progress().destroyed, 2000, "the source to be destroyed in the worker");
    expect(await eventOf("endless")).toMatchObject({ event: "rpc.error", status: 499, code: "RPC_CLIENT_CLOSED", bytes: expect.any(Number) });
  });

  it("bounds the method by timeoutMs, not the body that follows", async () => {
    const slow = await rpc(app.url, "plugin/p/slowBody");
    expect([slow.status, slow.body]).toEqual([200, "tick;".repeat(8)]);
  });

  it("removes the folder a worker made for a call whose worker was terminated at its timeout", async () => {
    const stuck = await rpc(app.url, "plugin/p/stuck");
    expect([stuck.status, stuck.body.code]).toEqual([504, "RPC_TIMEOUT"]);
    // The worker is terminated abortGraceMs after the timeout; its folder must not outlive it.
    await waitFor(() => callFolders().length === 0, 10_000, "the terminated worker's folder to go");
  });
});
