// docs/guides/files.md, downloads: a method returns APP_SERVER.file(source, {
// type, name, inline? }) and the answer is that body (bytes, a Web or Node stream, a file
// of its item or of the call's temporary folder), with its headers, streamed with
// backpressure, stopped when the client leaves, and logged once with the bytes sent.
import { mkdirSync, mkdtempSync, readdirSync, symlinkSync } from "node:fs";
import { request as httpRequest, type IncomingMessage } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

mkdirSync(join(tmpdir(), "counterpart-download-tests"), { recursive: true });
process.env.TMPDIR = mkdtempSync(join(tmpdir(), "counterpart-download-tests", "run-"));

const { useServer } = await import("../helpers/server.js");
const { tempApp } = await import("../helpers/app-root.js");
const { rpc } = await import("../helpers/http.js");
const { waitFor } = await import("../helpers/wait.js");

const METHODS = `
import { Readable } from "node:stream";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
const open = { auth: { public: true } };
export const policy = {
  bytes: open, inline: open, nodeStream: open, webStream: open, itemFile: open, outside: open, linked: open,
  tempFile: open, endless: open, state: open, badType: open, silent: open,
  slowBody: { auth: { public: true }, runtime: { timeoutMs: 300 } },
  slowMethod: { auth: { public: true }, runtime: { timeoutMs: 300 } },
};
const state = { produced: 0, destroyed: false, tempDir: null };
export function bytes() {
  return APP_SERVER.file(new TextEncoder().encode("a,b\\n1,2\\n"), { type: "text/csv; charset=utf-8", name: 'Résumé "2026".csv' });
}
export function inline() { return APP_SERVER.file(Buffer.from("<b>x</b>"), { type: "text/html", inline: true, name: "page.html" }); }
export function nodeStream() {
  let left = 40;
  return APP_SERVER.file(new Readable({ read() { this.push(left-- > 0 ? Buffer.alloc(128 * 1024, 120) : null); } }), { name: "n.bin" });
}
export function webStream() {
  let left = 3;
  return APP_SERVER.file(new ReadableStream({ pull(c) { if (left-- > 0) c.enqueue(new TextEncoder().encode("chunk;")); else c.close(); } }), { type: "text/plain" });
}
export function itemFile() { return APP_SERVER.file("data/report.txt", { type: "text/plain", name: "report.txt" }); }
export function outside() { return APP_SERVER.file("../../../../../../etc/hostname", { type: "text/plain" }); }
export function linked() { return APP_SERVER.file("data/link", { type: "text/plain" }); }
export async function tempFile(ctx) {
  state.tempDir = await ctx.tempDir();
  const path = join(state.tempDir, "export.txt");
  await writeFile(path, "made for this call");
  return APP_SERVER.file(path, { type: "text/plain", name: "export.txt" });
}
export function endless() {
  state.produced = 0; state.destroyed = false;
  const block = Buffer.alloc(64 * 1024, 97);
  return APP_SERVER.file(new Readable({
    read() { state.produced += block.length; this.push(block); },
    destroy(error, done) { state.destroyed = true; done(error); },
  }), { name: "endless.bin" });
}
export function silent() {
  state.destroyed = false;
  let sent = false;
  return APP_SERVER.file(new Readable({
    read() { if (!sent) { sent = true; this.push("first;"); } },
    destroy(error, done) { state.destroyed = true; done(error); },
  }), { name: "silent.bin" });
}
export function state_() { return state; }
export { state_ as state };
export function badType() { return APP_SERVER.file(Buffer.from("x"), { type: "text/plain\\r\\nx-evil: 1" }); }
export async function slowBody() {
  let left = 8;
  return APP_SERVER.file(new Readable({ read() { setTimeout(() => this.push(left-- > 0 ? "tick;" : null), 100); } }), { type: "text/plain" });
}
export async function slowMethod() { await new Promise((r) => setTimeout(r, 600)); return APP_SERVER.file(Buffer.from("late")); }
`;

const root = tempApp({ files: { "plugins/p/p.server.mjs": METHODS, "plugins/p/data/report.txt": "the report\n" } });
symlinkSync("/etc/hostname", join(root, "plugins/p/data/link"));

describe("file answers", () => {
  const app = useServer({ root });
  const eventOf = (method: string) => waitFor(() => app.logs.events().filter((event) => event.method === method).at(-1));

  it("answers bytes with their type, length, an attachment name with its ASCII fallback and UTF-8 form, nosniff, and logs the bytes", async () => {
    const answer = await rpc(app.url, "plugin/p/bytes");
    expect(answer.status).toBe(200);
    expect(answer.body).toBe("a,b\n1,2\n");
    expect(answer.headers.get("content-type")).toBe("text/csv; charset=utf-8");
    expect(answer.headers.get("content-length")).toBe("8");
    expect(answer.headers.get("content-disposition")).toBe(`attachment; filename="Resume _2026_.csv"; filename*=UTF-8''R%C3%A9sum%C3%A9%20%222026%22.csv`);
    expect(answer.headers.get("x-content-type-options")).toBe("nosniff");
    expect(await eventOf("bytes")).toMatchObject({ event: "rpc.complete", status: 200, bytes: 8 });
    const inline = await rpc(app.url, "plugin/p/inline");
    expect([inline.body, inline.headers.get("content-disposition")]).toEqual(["<b>x</b>", `inline; filename="page.html"; filename*=UTF-8''page.html`]);
  });

  it("streams Node and Web streams, and files of the item's folder", async () => {
    const node = await fetch(`${app.url}/__rpc/plugin/p/nodeStream`, { method: "POST" });
    expect([node.status, node.headers.get("content-type"), node.headers.get("content-length")]).toEqual([200, "application/octet-stream", null]);
    expect((await node.arrayBuffer()).byteLength).toBe(40 * 128 * 1024);
    expect(await eventOf("nodeStream")).toMatchObject({ event: "rpc.complete", bytes: 40 * 128 * 1024 });
    expect((await rpc(app.url, "plugin/p/webStream")).body).toBe("chunk;chunk;chunk;");
    const item = await rpc(app.url, "plugin/p/itemFile");
    expect([item.status, item.body, item.headers.get("content-length")]).toEqual([200, "the report\n", "11"]);
  });

  it("refuses a path outside the item's folder (symlinks resolved) and a bad type as the method's fault", async () => {
    for (const method of ["outside", "linked", "badType"]) {
      const answer = await rpc(app.url, `plugin/p/${method}`);
      expect([method, answer.status, answer.body.code]).toEqual([method, 500, "RPC_INTERNAL_ERROR"]);
      expect(JSON.stringify(answer.body)).not.toContain("localhost");
    }
  });

  it("answers a file of the call's temporary folder, then removes the folder", async () => {
    const answer = await rpc(app.url, "plugin/p/tempFile");
    expect([answer.status, answer.body, answer.headers.get("content-length")]).toEqual([200, "made for this call", "18"]);
    await waitFor(() => readdirSync(process.env.TMPDIR!).filter((name) => name.startsWith("counterpart-call-")).length === 0, 2000);
  });

  it("holds the source while the reader stops, and ends it when the reader leaves", async () => {
    const target = new URL(app.url);
    const response = await new Promise<IncomingMessage>((resolve, reject) => {
      const req = httpRequest({ host: target.hostname, port: target.port, path: "/__rpc/plugin/p/endless", method: "POST" }, resolve);
      req.on("error", reject);
      req.end();
    });
    expect(response.statusCode).toBe(200);
    response.pause();
    await new Promise((resolve) => setTimeout(resolve, 500));
    const held = (await rpc(app.url, "plugin/p/state")).body.result.produced;
    await new Promise((resolve) => setTimeout(resolve, 300));
    const later = (await rpc(app.url, "plugin/p/state")).body.result;
    expect(later.produced).toBe(held);
    expect(held).toBeLessThan(8 * 1024 * 1024);
    response.destroy();
    await waitFor(async () => (await rpc(app.url, "plugin/p/state")).body.result.destroyed, 2000);
    expect(await eventOf("endless")).toMatchObject({ event: "rpc.error", status: 499, code: "RPC_CLIENT_CLOSED", bytes: expect.any(Number) });
  });

  it("bounds the method by timeoutMs, not the body that follows", async () => {
    const slow = await rpc(app.url, "plugin/p/slowBody");
    expect([slow.status, slow.body]).toEqual([200, "tick;".repeat(8)]);
    const late = await rpc(app.url, "plugin/p/slowMethod");
    expect([late.status, late.body.code]).toEqual([504, "RPC_TIMEOUT"]);
  });
});

describe("the stall rule of a file answer's body", () => {
  // Heartbeats of 100 ms: a body that moves no byte for 300 ms is dropped.
  const app = useServer({ root, config: { server: { rpc: { streamHeartbeatMs: 100 } } } });
  const open = async (method: string) => {
    const target = new URL(app.url);
    return new Promise<IncomingMessage>((resolve, reject) => {
      const req = httpRequest({ host: target.hostname, port: target.port, path: `/__rpc/plugin/p/${method}`, method: "POST" }, resolve);
      req.on("error", reject);
      req.end();
    });
  };
  const closed = (response: IncomingMessage) => new Promise<boolean>((resolve) => {
    response.on("end", () => resolve(false));
    response.on("error", () => resolve(true));
    response.on("aborted", () => resolve(true));
    response.resume();
  });

  it("drops a body whose source says nothing for three heartbeats, and ends the source", async () => {
    const response = await open("silent");
    expect(response.statusCode).toBe(200);
    expect(await closed(response)).toBe(true);
    await waitFor(async () => (await rpc(app.url, "plugin/p/state")).body.result.destroyed, 2000, "the silent source to end");
  });

  it("drops a body whose reader took nothing for three heartbeats, and ends the source", async () => {
    const response = await open("endless");
    expect(response.statusCode).toBe(200);
    response.pause();
    await waitFor(async () => (await rpc(app.url, "plugin/p/state")).body.result.destroyed, 3000, "the held source to end");
    response.destroy();
  });
});
