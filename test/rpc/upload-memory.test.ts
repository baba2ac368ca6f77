// docs/guides/files.md "Files and binary data": a 1 GiB upload grows the server's peak RSS by at most
// 64 MB, and its temporary file is gone once the call has ended. The server is a child
// process (`node index.js`), its peak read from /proc/<pid>/status (VmHWM); the bytes are
// made as they are sent, and nothing that size is kept but the server's own temporary file.
import { createHash, randomBytes } from "node:crypto";
import { mkdtempSync, readdirSync, readFileSync } from "node:fs";
import { request as httpRequest } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { tempApp } from "../helpers/app-root.js";
import { useEntrypoints } from "../helpers/process.js";
import { waitFor } from "../helpers/wait.js";

const GIB = 1024 * 1024 * 1024;
const MB = 1024 * 1024;

const METHODS = `
import { createHash } from "node:crypto";
export const policy = { hash: { auth: { public: true }, runtime: { timeoutMs: 300000, files: { maxFiles: 1, maxFileBytes: ${2 * GIB} } } } };
export async function hash(_ctx, input) {
  const digest = createHash("sha256");
  for await (const chunk of input.file.stream()) digest.update(chunk);
  return { size: input.file.size, sha256: digest.digest("hex") };
}
`;

const serverTmp = mkdtempSync(join(tmpdir(), "counterpart-upload-memory-"));
const peakRss = (pid: number) => Number(/VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))![1]) * 1024;

/** POSTs `{ file: <size bytes> }` as multipart, made chunk by chunk as the socket takes them. */
function upload(url: string, size: number): Promise<{ status: number; body: any; sha256: string }> {
  const target = new URL(url);
  const block = randomBytes(MB);
  const digest = createHash("sha256");
  const head = Buffer.from(
    `--B\r\nContent-Disposition: form-data; name="args"\r\n\r\n${JSON.stringify({ args: [{ file: { $file: 0 } }] })}\r\n` +
      `--B\r\nContent-Disposition: form-data; name="file:0"; filename="big.bin"\r\nContent-Type: application/octet-stream\r\n\r\n`,
  );
  const tail = Buffer.from("\r\n--B--\r\n");
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      { host: target.hostname, port: target.port, path: "/__rpc/plugin/p/hash", method: "POST", headers: { "content-type": "multipart/form-data; boundary=B", "content-length": head.length + size + tail.length } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (chunk: Buffer) => chunks.push(chunk));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(Buffer.concat(chunks).toString("utf8")), sha256: digest.digest("hex") }));
      },
    );
    req.on("error", reject);
    req.write(head);
    let sent = 0;
    const pump = () => {
      while (sent < size) {
        const piece = block.subarray(0, Math.min(MB, size - sent));
        // Varied so that the file is not one block repeated.
        piece[0] = sent / MB & 0xff;
        digest.update(piece);
        sent += piece.length;
        if (!req.write(Buffer.from(piece))) return void req.once("drain", pump);
      }
      req.end(tail);
    };
    pump();
  });
}

describe("a 1 GiB upload", () => {
  // No V8 flag: the server must meet its bound as every Node line sizes its heap.
  const start = useEntrypoints(tempApp({ files: { "plugins/p/p.server.mjs": METHODS } }), () => ({}), "index.js", { TMPDIR: serverTmp });

  it("grows the server's peak RSS by at most 64 MB and leaves no file behind", { timeout: 240_000 }, async () => {
    const server = await start();
    const pid = server.child.pid!;
    // Warm: the parser, the method and the temporary folder's code paths loaded and run once.
    const warm = await upload(server.url, 4 * MB);
    expect([warm.status, warm.body.result]).toEqual([200, { size: 4 * MB, sha256: warm.sha256 }]);
    const before = peakRss(pid);
    const answer = await upload(server.url, GIB);
    expect([answer.status, answer.body.result]).toEqual([200, { size: GIB, sha256: answer.sha256 }]);
    const grown = peakRss(pid) - before;
    expect(grown).toBeLessThan(64 * MB);
    await waitFor(() => readdirSync(serverTmp).length === 0, 2000, "the temporary folder to go");
  });
});
