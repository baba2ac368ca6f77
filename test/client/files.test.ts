/**
 * docs/guides/files.md, the browser's side, in Chromium against the real server:
 * `xserver` sends Blobs anywhere in the input as multipart and the method finds them in
 * place; a file answer resolves to a Blob; `onUploadProgress` reports the upload; HttpClient
 * sends Blob, FormData, ArrayBuffer bodies and reads `expect: "blob" | "arrayBuffer" | "stream"`.
 */
import { afterAll, beforeAll, expect, it } from "vitest";
import type { Browser, Page } from "playwright-core";
import { startServer, type TestServer } from "../helpers/server.js";
import { tempApp } from "../helpers/app-root.js";
import { openViewer, rpc } from "../helpers/http.js";
import { waitFor } from "../helpers/wait.js";
import { describeInBrowser, launchChromium, PAGE_HARNESS, type PageWindow } from "../helpers/browser.js";

const METHODS = `
import { createHash } from "node:crypto";
import { Readable } from "node:stream";
const sources = { stalled: { destroyed: false } };
export const policy = {
  slowFile: { runtime: { timeoutMs: 5000 } },
  stalledFile: {},
  stalledState: {},
  describe: { runtime: { files: { maxFiles: 4, maxFileBytes: 8 * 1024 * 1024 } } },
  small: { runtime: { files: { maxFiles: 1, maxFileBytes: 10 } } },
  report: {},
  echo: {},
};
async function walk(value) {
  if (value && typeof value === "object" && Object.prototype.toString.call(value) === "[object UploadedFile]") {
    const hash = createHash("sha256");
    for await (const chunk of value.stream()) hash.update(chunk);
    return { name: value.name, type: value.type, size: value.size, sha256: hash.digest("hex") };
  }
  if (Array.isArray(value)) return Promise.all(value.map(walk));
  if (value && typeof value === "object") {
    const out = {};
    for (const [key, inner] of Object.entries(value)) out[key] = await walk(inner);
    return out;
  }
  return value;
}
export function describe(_ctx, input) { return walk(input); }
export function small(_ctx, input) { return walk(input); }
export function report(_ctx, input) {
  return APP_SERVER.file(new TextEncoder().encode("report for " + input.day + "\\n"), { type: "text/plain; charset=utf-8", name: "report-" + input.day + ".txt" });
}
export function echo(_ctx, input) { return input; }
// Its body comes in 8 ticks 100 ms apart: longer than the call's timeoutMs, never silent for long.
export function slowFile() {
  let left = 8;
  return APP_SERVER.file(new Readable({ read() { setTimeout(() => this.push(left-- > 0 ? "tick;" : null), 100); } }), { type: "text/plain" });
}
// One chunk, then nothing: the body stalls.
export function stalledFile() {
  sources.stalled = { destroyed: false };
  let sent = false;
  return APP_SERVER.file(new Readable({
    read() { if (!sent) { sent = true; this.push("first;"); } },
    destroy(error, done) { sources.stalled.destroyed = true; done(error); },
  }), { type: "application/octet-stream" });
}
export function stalledState() { return sources.stalled; }
`;

describeInBrowser("files through the browser client", () => {
  let app: TestServer;
  let browser: Browser;
  let page: Page;
  beforeAll(async () => {
    // Heartbeats of 200 ms: the server drops a download silent for 600 ms.
    app = await startServer({ root: tempApp({ files: { "plugins/files/files.server.mjs": METHODS } }), config: { server: { rpc: { streamHeartbeatMs: 200 } } } });
    browser = await launchChromium();
    page = await browser.newPage();
    await page.addInitScript(PAGE_HARNESS);
    await page.goto(app.url + "/");
  });
  afterAll(async () => {
    await browser?.close();
    await app?.close();
  });

  it("sends every Blob and File of the input as multipart, each reaching the method at its place", async () => {
    const result = await page.evaluate(async () => {
      const w = globalThis as unknown as PageWindow & { File: any; Blob: any; crypto: any };
      const big = new Uint8Array(3 * 1024 * 1024).map((_, i) => (i * 7) & 0xff);
      const hex = async (bytes: Uint8Array) => [...new Uint8Array(await w.crypto.subtle.digest("SHA-256", bytes))].map((b: number) => b.toString(16).padStart(2, "0")).join("");
      const input = {
        title: "scan",
        file: new w.File([big], "slide é.bin", { type: "application/octet-stream" }),
        extra: [new w.Blob(["hello"], { type: "text/plain" }), { deep: new w.File(["{}"], "a.json", { type: "application/json" }) }],
      };
      const answer = await w.xserver.plugin.files.describe(input);
      // Beside files, an object that reads as a placeholder is refused before anything is sent.
      const ambiguous = await w.settle(w.xserver.plugin.files.describe({ file: input.file, mine: { $file: 9 } }));
      const plainJson = await w.xserver.plugin.files.echo({ mine: { $file: 9 } });
      return { answer, ambiguous, plainJson, bigHash: await hex(big), helloHash: await hex(new TextEncoder().encode("hello")), inputStillHasBlob: input.file instanceof w.Blob };
    });
    expect(result.answer).toEqual({
      title: "scan",
      file: { name: "slide é.bin", type: "application/octet-stream", size: 3 * 1024 * 1024, sha256: result.bigHash },
      extra: [{ name: "blob", type: "text/plain", size: 5, sha256: result.helloHash }, { deep: { name: "a.json", type: "application/json", size: 2, sha256: expect.any(String) } }],
    });
    expect(result.ambiguous).toMatchObject({ ok: false, name: "TypeError" });
    expect(result.plainJson).toEqual({ mine: { $file: 9 } });
    expect(result.inputStillHasBlob).toBe(true);
  });

  it("reports upload progress up to the whole body, and rejects a refused upload with its code", async () => {
    const result = await page.evaluate(async () => {
      const w = globalThis as unknown as PageWindow & { Blob: any };
      const progress: Array<[number, number]> = [];
      const blob = new w.Blob([new Uint8Array(2 * 1024 * 1024)]);
      const answer = await w.xserver.plugin.files.describe({ blob }, { onUploadProgress: (loaded: number, total: number) => progress.push([loaded, total]) });
      const refused = await w.settle(w.xserver.plugin.files.small({ blob: new w.Blob(["eleven bytes"]) }));
      const notAccepted = await w.settle(w.xserver.plugin.files.echo({ blob }));
      return { size: answer.blob.size, progress, refused, notAccepted };
    });
    expect(result.size).toBe(2 * 1024 * 1024);
    expect(result.progress.length).toBeGreaterThan(0);
    const [loaded, total] = result.progress.at(-1)!;
    expect(loaded).toBe(total);
    expect(total).toBeGreaterThan(2 * 1024 * 1024);
    expect(result.refused).toMatchObject({ ok: false, status: 413, code: "RPC_FILE_TOO_LARGE" });
    expect(result.notAccepted).toMatchObject({ ok: false, status: 415, code: "RPC_FILES_NOT_ACCEPTED" });
  });

  it("resolves a file answer to a Blob of its type, and a JSON answer as ever", async () => {
    const result = await page.evaluate(async () => {
      const w = globalThis as unknown as PageWindow & { Blob: any };
      const file = await w.xserver.plugin.files.report({ day: "2026-11-27" });
      const plain = await w.xserver.plugin.files.echo({ day: 1 });
      return { isBlob: file instanceof w.Blob, type: file.type, text: await file.text(), plain };
    });
    expect(result).toEqual({ isBlob: true, type: "text/plain; charset=utf-8", text: "report for 2026-11-27\n", plain: { day: 1 } });
  });

  it("gives a download's body the stall rule of streams: a slow one outlives timeoutMs, a silent one fails RPC_STREAM_STALLED and its source ends", { timeout: 30_000 }, async () => {
    const result = await page.evaluate(async () => {
      const w = globalThis as unknown as PageWindow & { Blob: any };
      const slow = await w.xserver.plugin.files.slowFile({}, { timeoutMs: 300 });
      const stalled = await w.settle(w.xserver.plugin.files.stalledFile({}, { stallTimeoutMs: 400 }));
      const viaClient = await w.settle(w.xserver.plugin.files.stalledFile({}, { client: new w.HttpClient({ stallTimeoutMs: 400 }) }));
      return { slow: [slow instanceof w.Blob, await slow.text()], stalled, viaClient };
    });
    expect(result.slow).toEqual([true, "tick;".repeat(8)]);
    expect(result.stalled).toMatchObject({ ok: false, code: "RPC_STREAM_STALLED" });
    expect(result.viaClient).toMatchObject({ ok: false, code: "RPC_STREAM_STALLED" });
    // The server dropped the silent body after three heartbeats, ending its source (Chromium
    // kept the connection it gave up reading).
    const viewer = await openViewer(app.url);
    await waitFor(async () => (await rpc(app.url, "plugin/files/stalledState", { viewer })).body.result?.destroyed === true, 3000, "the stalled source to end");
  });

  it("HttpClient sends Blob, FormData and ArrayBuffer bodies and reads blob, arrayBuffer and stream answers", async () => {
    const result = await page.evaluate(async () => {
      const w = globalThis as unknown as PageWindow & { Blob: any; FormData: any };
      const client = new w.HttpClient();
      const path = "/__rpc/plugin/files/echo";
      const asJson = (body: unknown, type: string) => client.post(path, new w.Blob([JSON.stringify(body)], { type }), { expect: "json" });
      const blobBody = await asJson({ args: ["from a blob"] }, "application/json");
      const bufferBody = await client.post(path, new TextEncoder().encode(JSON.stringify({ args: ["from bytes"] })).buffer, { headers: { "content-type": "application/json" } });
      const form = new w.FormData();
      form.append("args", JSON.stringify({ args: [{ f: { $file: 0 } }] }));
      form.append("file:0", new w.Blob(["xyz"], { type: "text/plain" }), "x.txt");
      const formBody = await client.post("/__rpc/plugin/files/describe", form);
      const blob = await client.post("/__rpc/plugin/files/report", { args: [{ day: "d" }] }, { expect: "blob" });
      const buffer = await client.post("/__rpc/plugin/files/report", { args: [{ day: "e" }] }, { expect: "arrayBuffer" });
      const stream = await client.post("/__rpc/plugin/files/report", { args: [{ day: "f" }] }, { expect: "stream" });
      const streamed = await new Response(stream).text();
      return {
        blobBody,
        bufferBody,
        formBody,
        blob: [blob instanceof w.Blob, await blob.text()],
        buffer: [buffer instanceof ArrayBuffer, new TextDecoder().decode(buffer)],
        stream: [typeof stream.getReader, streamed],
      };
    });
    expect(result).toEqual({
      blobBody: { result: "from a blob" },
      bufferBody: { result: "from bytes" },
      formBody: { result: { f: { name: "x.txt", type: "text/plain", size: 3, sha256: expect.any(String) } } },
      blob: [true, "report for d\n"],
      buffer: [true, "report for e\n"],
      stream: ["function", "report for f\n"],
    });
  });
});
