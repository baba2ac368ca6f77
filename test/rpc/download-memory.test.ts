// docs/guides/files.md "Files and binary data", downloads: a method returning a 1 GiB stream with
// APP_SERVER.file is read in full by a client over real HTTP, every byte arriving (length
// and a hash taken as the bytes come), while the server's peak RSS grows by at most 64 MB.
// The server is a child process (`node index.js`), its peak read from /proc/<pid>/status
// (VmHWM); the bytes are made as they are read, on both sides, and nothing that size is
// kept anywhere.
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { request as httpRequest } from "node:http";
import { describe, expect, it } from "vitest";
import { tempApp } from "../helpers/app-root.js";
import { useEntrypoints } from "../helpers/process.js";

const GIB = 1024 * 1024 * 1024;
const MB = 1024 * 1024;
const CHUNK = 16 * 1024;

/**
 * Chunk `n` of the generated file: the same on both sides, and no two alike in a row. The
 * method hands on 64 such blocks in turn rather than a new one per chunk, so that what is
 * measured is the server's own memory: a method's spent chunks are its garbage, which Node
 * 24's V8 lets grow to some 75 MB before a full collection (Node 20: under 64 MB). A
 * block the connection still held when handed on again would change the hash.
 */
const BLOCKS = 64;
const CHUNK_OF = `(n) => { const chunk = Buffer.alloc(${CHUNK}, n & 0xff); chunk.writeUInt32BE(n % ${BLOCKS}, 0); return chunk; }`;

const METHODS = `
import { Readable } from "node:stream";
const chunkOf = ${CHUNK_OF};
const blocks = Array.from({ length: ${BLOCKS} }, (_, n) => chunkOf(n));
export const policy = { big: { auth: { public: true } } };
export function big(_ctx, input) {
  let n = 0;
  const chunks = input.size / ${CHUNK};
  return APP_SERVER.file(new Readable({ read() { this.push(n < chunks ? blocks[n++ % ${BLOCKS}] : null); } }), { name: "big.bin" });
}
`;

const peakRss = (pid: number) => Number(/VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))![1]) * 1024;

/** Calls `big` for `size` bytes and reads the answer to its end, hashing it as it arrives. */
function download(url: string, size: number): Promise<{ status: number; type: string | undefined; length: number; sha256: string }> {
  const target = new URL(url);
  const body = JSON.stringify({ args: [{ size }] });
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      { host: target.hostname, port: target.port, path: "/__rpc/plugin/p/big", method: "POST", headers: { "content-type": "application/json", "content-length": Buffer.byteLength(body) } },
      (res) => {
        const digest = createHash("sha256");
        let length = 0;
        res.on("data", (chunk: Buffer) => {
          length += chunk.length;
          digest.update(chunk);
        });
        res.on("end", () => resolve({ status: res.statusCode ?? 0, type: res.headers["content-type"], length, sha256: digest.digest("hex") }));
        res.on("error", reject);
      },
    );
    req.on("error", reject);
    req.end(body);
  });
}

function expectedHash(size: number): string {
  const chunkOf = new Function(`return ${CHUNK_OF}`)() as (n: number) => Buffer;
  const digest = createHash("sha256");
  const blocks = Array.from({ length: BLOCKS }, (_, n) => chunkOf(n));
  for (let n = 0; n < size / CHUNK; n += 1) digest.update(blocks[n % BLOCKS]!);
  return digest.digest("hex");
}

describe("a 1 GiB download", () => {
  const start = useEntrypoints(tempApp({ files: { "plugins/p/p.server.mjs": METHODS } }), () => ({}));

  it("arrives whole while the server's peak RSS grows by at most 64 MB", { timeout: 240_000 }, async () => {
    const server = await start();
    const pid = server.child.pid!;
    // Warm: the method and the answer's code paths loaded and run once.
    const warm = await download(server.url, 4 * MB);
    expect(warm).toEqual({ status: 200, type: "application/octet-stream", length: 4 * MB, sha256: expectedHash(4 * MB) });
    const before = peakRss(pid);
    const answer = await download(server.url, GIB);
    const grown = peakRss(pid) - before;
    expect(answer).toEqual({ status: 200, type: "application/octet-stream", length: GIB, sha256: expectedHash(GIB) });
    expect(grown).toBeLessThan(64 * MB);
  });
});
