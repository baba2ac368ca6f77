// docs/guides/files.md: a method with `runtime.files` takes multipart/form-data,
// a part `args` and parts `file:<n>` placed where `{"$file": n}` stands; every file reaches
// the method as an UploadedFile (inline or isolated), and every refusal is early, answered
// with its code, and leaves nothing on disk.
import { mkdirSync, mkdtempSync, readdirSync, watch } from "node:fs";
import { request as httpRequest } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";

// Each test file runs in its own process: the server's temporary folders go here, to be counted.
mkdirSync(join(tmpdir(), "counterpart-upload-tests"), { recursive: true });
process.env.TMPDIR = mkdtempSync(join(tmpdir(), "counterpart-upload-tests", "run-"));

const { useServer } = await import("../helpers/server.js");
const { tempApp } = await import("../helpers/app-root.js");
const { rpc } = await import("../helpers/http.js");
const { waitFor } = await import("../helpers/wait.js");

const METHODS = `
import { createHash } from "node:crypto";
export let calls = 0;
const files = { maxFiles: 3, maxFileBytes: 300000 };
export const policy = {
  describe: { auth: { public: true }, runtime: { files } },
  isolatedDescribe: { auth: { public: true }, runtime: { files, isolation: "worker" } },
  images: { auth: { public: true }, runtime: { files: { maxFiles: 2, maxFileBytes: 1000, types: ["image/*", "application/pdf"] } } },
  counted: { auth: { public: true }, runtime: { files: { maxFiles: 1, maxFileBytes: 100000 } } },
  plain: { auth: { public: true } },
  guarded: { runtime: { files } },
  verified: { auth: { requireSession: false }, runtime: { files } },
  count: { auth: { public: true } },
};
async function hashOf(file) {
  const hash = createHash("sha256");
  for await (const chunk of file.stream()) hash.update(chunk);
  return hash.digest("hex");
}
async function describeAll(value) {
  if (value && typeof value === "object" && Object.prototype.toString.call(value) === "[object UploadedFile]") {
    const text = await value.text();
    const bytes = new Uint8Array(await value.arrayBuffer());
    return { file: value.name, type: value.type, size: value.size, sha256: await hashOf(value), textLength: text.length, bytes: bytes.length };
  }
  if (Array.isArray(value)) return Promise.all(value.map(describeAll));
  if (value && typeof value === "object") {
    const out = {};
    for (const [key, inner] of Object.entries(value)) out[key] = await describeAll(inner);
    return out;
  }
  return value;
}
export function describe(_ctx, input) { calls++; return describeAll(input); }
export function isolatedDescribe(_ctx, input) { return describeAll(input); }
export function images(_ctx, input) { calls++; return describeAll(input); }
export function counted(_ctx, input) { calls++; return describeAll(input); }
export function plain(_ctx, input) { calls++; return input; }
export function guarded(_ctx, input) { calls++; return describeAll(input); }
export function verified(_ctx, input) { calls++; return describeAll(input); }
export function count() { return calls; }
`;

const sha256 = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest("hex");
const callFolders = () => readdirSync(process.env.TMPDIR!).filter((name) => name.startsWith("counterpart-call-"));
const noCallFolders = () => waitFor(() => callFolders().length === 0, 2000);

function bytes(size: number, seed = 7): Uint8Array {
  const out = new Uint8Array(size);
  for (let i = 0; i < size; i += 1) out[i] = (i * seed + (i >> 8)) & 0xff;
  return out;
}

/** A multipart body as the browser client writes it. */
function form(args: unknown, files: Record<number, { data: Uint8Array | string; type?: string; name?: string }>): FormData {
  const body = new FormData();
  body.append("args", JSON.stringify({ args: [args] }));
  for (const [index, file] of Object.entries(files)) body.append(`file:${index}`, new Blob([file.data], { type: file.type ?? "" }), file.name ?? "blob");
  return body;
}

async function post(url: string, path: string, body: FormData | string, headers: Record<string, string> = {}) {
  const response = await fetch(`${url}/__rpc/${path}`, { method: "POST", body, headers });
  const text = await response.text();
  let json: any = null;
  try {
    json = JSON.parse(text);
  } catch {
    json = text;
  }
  return { status: response.status, body: json, headers: response.headers };
}

/** A hand-written multipart body, to send what no FormData would. */
function rawMultipart(parts: Array<{ headers: string[]; body: string | Uint8Array }>, boundary = "XyZ"): Buffer {
  const chunks: Buffer[] = [];
  for (const part of parts) {
    chunks.push(Buffer.from(`--${boundary}\r\n${part.headers.join("\r\n")}\r\n\r\n`));
    chunks.push(Buffer.from(part.body));
    chunks.push(Buffer.from("\r\n"));
  }
  chunks.push(Buffer.from(`--${boundary}--\r\n`));
  return Buffer.concat(chunks);
}

describe("uploads through a method with runtime.files", () => {
  const app = useServer({ root: tempApp({ files: { "plugins/p/p.server.mjs": METHODS } }) });
  const calls = async () => (await rpc(app.url, "plugin/p/count")).body.result as number;

  it("puts every file where its placeholder was, small ones and ones spilled to disk, inline and isolated", async () => {
    const small = bytes(1000);
    const large = bytes(200_000, 13);
    const text = "héllo wörld\n";
    const input = { title: "two", doc: { $file: 0 }, list: [{ $file: 1 }, { nested: { $file: 2 } }] };
    for (const method of ["describe", "isolatedDescribe"]) {
      const answer = await post(app.url, `plugin/p/${method}`, form(input, { 0: { data: small, type: "application/octet-stream", name: "small.bin" }, 1: { data: large, type: "image/png", name: "große.png" }, 2: { data: text, type: "text/plain;charset=utf-8", name: "t.txt" } }));
      expect([method, answer.status]).toEqual([method, 200]);
      expect(answer.body.result).toEqual({
        title: "two",
        doc: { file: "small.bin", type: "application/octet-stream", size: 1000, sha256: sha256(small), textLength: expect.any(Number), bytes: 1000 },
        list: [
          { file: "große.png", type: "image/png", size: 200_000, sha256: sha256(large), textLength: expect.any(Number), bytes: 200_000 },
          { nested: { file: "t.txt", type: "text/plain", size: Buffer.byteLength(text), sha256: sha256(Buffer.from(text)), textLength: text.length, bytes: Buffer.byteLength(text) } },
        ],
      });
      await noCallFolders();
    }
  });

  it("leaves a placeholder in a plain JSON body alone: only multipart calls carry files", async () => {
    const answer = await rpc(app.url, "plugin/p/plain", { body: { args: [{ doc: { $file: 0 } }] } });
    expect(answer.body).toEqual({ result: { doc: { $file: 0 } } });
    const files = await rpc(app.url, "plugin/p/describe", { body: { args: [{ doc: { $file: 0 } }] } });
    expect(files.body).toEqual({ result: { doc: { $file: 0 } } });
  });

  it("refuses early with the right code and leaves nothing on disk", async () => {
    const before = await calls();
    const cases: Array<[string, FormData | Buffer, number, string, string?]> = [
      ["describe", form({ a: { $file: 0 } }, { 0: { data: bytes(300_001) } }), 413, "RPC_FILE_TOO_LARGE"],
      ["describe", form([{ $file: 0 }, { $file: 1 }, { $file: 2 }, { $file: 3 }], { 0: { data: "a" }, 1: { data: "b" }, 2: { data: "c" }, 3: { data: "d" } }), 413, "RPC_TOO_MANY_FILES"],
      ["images", form({ $file: 0 }, { 0: { data: "x", type: "text/plain" } }), 415, "RPC_BAD_FILE_TYPE"],
      ["plain", form({ $file: 0 }, { 0: { data: "x" } }), 415, "RPC_FILES_NOT_ACCEPTED"],
      ["describe", form({ a: 1 }, { 0: { data: "x" } }), 400, "RPC_BAD_REQUEST", "unplaced-file"],
      ["describe", form({ a: { $file: 1 } }, { 0: { data: "x" } }), 400, "RPC_BAD_REQUEST", "bad-placeholder"],
      ["describe", form({ a: { $file: 0 }, b: { $file: 0 } }, { 0: { data: "x" } }), 400, "RPC_BAD_REQUEST", "bad-placeholder"],
    ];
    for (const [method, body, status, code, reason] of cases) {
      const answer = await post(app.url, `plugin/p/${method}`, body as FormData);
      expect([method, code, answer.status, answer.body.code]).toEqual([method, code, status, code]);
      if (reason) expect(answer.body.details.reason).toBe(reason);
      await noCallFolders();
    }
    // A type outside `types`, and one inside, parameters ignored, none given meaning application/octet-stream.
    const raw = (type: string | null) =>
      rawMultipart([
        { headers: ['Content-Disposition: form-data; name="args"'], body: JSON.stringify({ args: [{ $file: 0 }] }) },
        { headers: ['Content-Disposition: form-data; name="file:0"; filename="f"', ...(type === null ? [] : [`Content-Type: ${type}`])], body: "abc" },
      ]);
    const multipartHeaders = { "content-type": "multipart/form-data; boundary=XyZ" };
    expect((await post(app.url, "plugin/p/images", raw("image/png; x=1") as unknown as string, multipartHeaders)).body.result).toMatchObject({ type: "image/png", size: 3 });
    expect((await post(app.url, "plugin/p/images", raw("application/pdf") as unknown as string, multipartHeaders)).status).toBe(200);
    const untyped = await post(app.url, "plugin/p/images", raw(null) as unknown as string, multipartHeaders);
    expect([untyped.status, untyped.body.code, untyped.body.details.type]).toEqual([415, "RPC_BAD_FILE_TYPE", "application/octet-stream"]);
    expect((await post(app.url, "plugin/p/describe", raw(null) as unknown as string, multipartHeaders)).body.result).toMatchObject({ type: "application/octet-stream" });
    // Malformed multipart: no boundary, a body cut short, a part of another name.
    const malformed = [
      [rawMultipart([{ headers: ['Content-Disposition: form-data; name="args"'], body: "{}" }]), { "content-type": "multipart/form-data" }],
      [rawMultipart([{ headers: ['Content-Disposition: form-data; name="args"'], body: "{}" }]).subarray(0, 60), multipartHeaders],
      [rawMultipart([{ headers: ['Content-Disposition: form-data; name="other"'], body: "{}" }]), multipartHeaders],
      [rawMultipart([{ headers: ['Content-Disposition: form-data; name="args"'], body: "{not json" }]), multipartHeaders],
    ] as const;
    for (const [body, headers] of malformed) {
      const answer = await post(app.url, "plugin/p/describe", body as unknown as string, headers);
      expect([answer.status, answer.body.code]).toEqual([400, "RPC_BAD_REQUEST"]);
    }
    await noCallFolders();
    // The successful ones above ran; no refused one did.
    expect(await calls()).toBe(before + 3);
    const serverErrors = app.logs.lines.filter((line) => Number(line.level) >= 50);
    expect(serverErrors).toEqual([]);
  });

  it("bounds the whole body by maxBodyBytes, and checks the session before reading a byte", async () => {
    const big = form({ $file: 0 }, { 0: { data: bytes(50_000) } });
    // counted: maxFiles 1 × 100 000 + 1 MiB by default; a declared length over it is refused unread.
    const declared = await sendRaw(app.url, "/__rpc/plugin/p/counted", { "content-type": "multipart/form-data; boundary=XyZ", "content-length": String(100_000 + 1024 * 1024 + 1) }, Buffer.alloc(10));
    expect([declared.status, JSON.parse(declared.body).code]).toEqual([413, "RPC_PAYLOAD_TOO_LARGE"]);
    const noSession = await post(app.url, "plugin/p/guarded", big);
    expect([noSession.status, noSession.body.code]).toEqual([401, "RPC_NO_SESSION"]);
    const withSession = await post(app.url, "plugin/p/guarded", big, { cookie: app.viewer.cookie, "x-app-csrf": app.viewer.csrf });
    expect([withSession.status, withSession.body.result.size]).toEqual([200, 50_000]);
    await noCallFolders();
  });

  it("runs the verifiers on args before reading a file: a refused caller's upload never reaches the disk", async () => {
    const made: string[] = [];
    const watcher = watch(process.env.TMPDIR!, (_event, name) => {
      if (name?.startsWith("counterpart-call-")) made.push(name);
    });
    try {
      const refused = await post(app.url, "plugin/p/verified", form({ $file: 0 }, { 0: { data: bytes(250_000) } }));
      expect([refused.status, refused.body.code]).toEqual([401, "RPC_AUTH_NOT_CONFIGURED"]);
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(made).toEqual([]);
      const before = await calls();
      const filesFirst = rawMultipart([
        { headers: ['Content-Disposition: form-data; name="file:0"; filename="f"'], body: "abc" },
        { headers: ['Content-Disposition: form-data; name="args"'], body: JSON.stringify({ args: [{ $file: 0 }] }) },
      ]);
      const answer = await post(app.url, "plugin/p/describe", filesFirst as unknown as string, { "content-type": "multipart/form-data; boundary=XyZ" });
      expect([answer.status, answer.body.code, answer.body.details.reason]).toEqual([400, "RPC_BAD_REQUEST", "args-first"]);
      expect(await calls()).toBe(before);
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(made).toEqual([]);
    } finally {
      watcher.close();
    }
  });

  it("removes the temporary files of a client that leaves mid-upload", async () => {
    const target = new URL(app.url);
    const req = httpRequest({ host: target.hostname, port: target.port, path: "/__rpc/plugin/p/describe", method: "POST", headers: { "content-type": "multipart/form-data; boundary=XyZ" } });
    req.on("error", () => {});
    req.write(`--XyZ\r\nContent-Disposition: form-data; name="args"\r\n\r\n{"args":[{"$file":0}]}\r\n`);
    req.write(`--XyZ\r\nContent-Disposition: form-data; name="file:0"; filename="big"\r\nContent-Type: application/octet-stream\r\n\r\n`);
    req.write(Buffer.alloc(150_000, 1));
    await waitFor(() => callFolders().length === 1, 2000);
    req.destroy();
    await noCallFolders();
    await waitFor(() => app.logs.events().some((event) => event.method === "describe" && event.code === "RPC_CLIENT_CLOSED"), 2000);
  });
});

function sendRaw(url: string, path: string, headers: Record<string, string>, body: Buffer): Promise<{ status: number; body: string }> {
  const target = new URL(url);
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: target.hostname, port: target.port, path, method: "POST", headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (chunk: Buffer) => chunks.push(chunk));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString("utf8") }));
    });
    req.on("error", (error: NodeJS.ErrnoException) => {
      if (error.code !== "EPIPE" && error.code !== "ECONNRESET") reject(error);
    });
    req.write(body);
  });
}
