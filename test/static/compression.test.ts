// docs/reference/http-routes.md: static files and the client script are compressed as the client's
// Accept-Encoding asks and carry validators (ETag, 304); pages are compressed but never
// stored or answered 304; RPC answers, streams and proxied bodies are never compressed.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { brotliDecompressSync, gunzipSync } from "node:zlib";
import { request as httpRequest, type IncomingHttpHeaders } from "node:http";
import { startServer, type TestServer } from "../helpers/server.js";
import { openViewer, type Viewer } from "../helpers/http.js";
import { openStream } from "../helpers/stream.js";
import { TestUpstream } from "../helpers/upstream.js";

const ROOT = join(import.meta.dirname, "../fixtures/headers-app");
const CLIENT = join(import.meta.dirname, "../../dist/client/client.js");

interface BytesAnswer {
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

/** One request, its body as the bytes on the wire (no decoding, unlike fetch). */
function get(url: string, path: string, headers: Record<string, string> = {}, method = "GET", body?: string): Promise<BytesAnswer> {
  const target = new URL(url);
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: target.hostname, port: target.port, path, method, headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (chunk: Buffer) => chunks.push(chunk));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
      res.on("error", reject);
    });
    req.on("error", reject);
    req.end(body);
  });
}

const decode = (answer: BytesAnswer): Buffer =>
  answer.headers["content-encoding"] === "br" ? brotliDecompressSync(answer.body) : answer.headers["content-encoding"] === "gzip" ? gunzipSync(answer.body) : answer.body;

describe("compression and validators", () => {
  let upstream: TestUpstream;
  let app: TestServer;
  let viewer: Viewer;
  const css = readFileSync(join(ROOT, "public/big.css"));
  beforeAll(async () => {
    upstream = await new TestUpstream().start();
    upstream.routes.set("/text", (_req, res) => {
      res.writeHead(200, { "content-type": "text/plain" });
      res.end("y".repeat(8 * 1024));
    });
    app = await startServer({ root: ROOT, config: { server: { secure: { proxies: { up: { baseUrl: upstream.origin } } } } } });
    viewer = await openViewer(app.url);
  });
  afterAll(async () => {
    await app?.close();
    await upstream?.close();
  });

  it("sends a static file in gzip or br as Accept-Encoding asks, and as it is without one", async () => {
    const answers = {
      // What browsers send: gzip, which costs half of brotli's CPU per request for as many bytes.
      browser: await get(app.url, "/big.css", { "accept-encoding": "gzip, deflate, br, zstd" }),
      gzip: await get(app.url, "/big.css", { "accept-encoding": "gzip" }),
      br: await get(app.url, "/big.css", { "accept-encoding": "br" }),
      preferringBr: await get(app.url, "/big.css", { "accept-encoding": "gzip;q=0.5, br" }),
      none: await get(app.url, "/big.css"),
      identity: await get(app.url, "/big.css", { "accept-encoding": "identity" }),
    };
    expect(Object.fromEntries(Object.entries(answers).map(([name, answer]) => [name, answer.headers["content-encoding"]]))).toEqual({
      browser: "gzip",
      gzip: "gzip",
      br: "br",
      preferringBr: "br",
      none: undefined,
      identity: undefined,
    });
    for (const answer of Object.values(answers)) expect(decode(answer)).toEqual(css);
    expect(answers.br.body.length).toBeLessThan(css.length / 3);
    expect(answers.gzip.body.length).toBeLessThan(css.length / 3);
    expect(answers.browser.headers.vary).toMatch(/accept-encoding/i);
    expect(answers.none.headers["content-length"]).toBe(String(css.length));
  });

  it("sends files under 1 KiB and binaries as they are", async () => {
    for (const path of ["/small.txt", "/blob.bin"]) {
      const answer = await get(app.url, path, { "accept-encoding": "br, gzip" });
      expect([path, answer.status, answer.headers["content-encoding"], answer.headers.vary]).toEqual([path, 200, undefined, undefined]);
      expect(answer.body).toEqual(readFileSync(join(ROOT, "public", path)));
    }
  });

  it("sends the client script from the build's .br and .gz files, brotli first", async () => {
    const script = readFileSync(CLIENT);
    const br = await get(app.url, "/__app/client.js", { "accept-encoding": "gzip, deflate, br, zstd" });
    const gzip = await get(app.url, "/__app/client.js", { "accept-encoding": "gzip" });
    const plain = await get(app.url, "/__app/client.js");
    expect(br.body).toEqual(readFileSync(`${CLIENT}.br`));
    expect(gzip.body).toEqual(readFileSync(`${CLIENT}.gz`));
    for (const answer of [br, gzip, plain]) {
      expect(decode(answer)).toEqual(script);
      expect(answer.headers["content-type"]).toMatch(/javascript/);
      expect(answer.headers["cache-control"]).toBe("no-cache");
      expect(answer.headers.vary).toMatch(/accept-encoding/i);
    }
    expect(plain.headers["content-encoding"]).toBeUndefined();
    // Each form is its own representation, with its own validator.
    expect(new Set([br.headers.etag, gzip.headers.etag, plain.headers.etag]).size).toBe(3);
    const map = await get(app.url, "/__app/client.js.map", { "accept-encoding": "br" });
    expect(map.body).toEqual(readFileSync(`${CLIENT}.map.br`));
    expect(JSON.parse(decode(map).toString("utf8"))).toHaveProperty("mappings");
  });

  it("answers If-None-Match with 304 and no body, for files and the client script", async () => {
    for (const [path, encoding] of [["/big.css", "br"], ["/big.css", "gzip"], ["/small.txt", "br"], ["/__app/client.js", "br"], ["/__app/client.js", "gzip"]] as const) {
      const first = await get(app.url, path, { "accept-encoding": encoding });
      expect(first.headers.etag).toMatch(/^(W\/)?"[^"]+"$/);
      expect(first.headers["last-modified"]).toBeDefined();
      const again = await get(app.url, path, { "accept-encoding": encoding, "if-none-match": first.headers.etag! });
      expect([path, encoding, again.status, again.body.length, again.headers.etag]).toEqual([path, encoding, 304, 0, first.headers.etag]);
      const changed = await get(app.url, path, { "accept-encoding": encoding, "if-none-match": '"something-else"' });
      expect(changed.status).toBe(200);
    }
  });

  it("labels no 304 of a file compressed on the fly with a Content-Encoding", async () => {
    const first = await get(app.url, "/big.css", { "accept-encoding": "br" });
    const again = await get(app.url, "/big.css", { "accept-encoding": "br", "if-none-match": first.headers.etag! });
    expect(again.status).toBe(304);
    expect(again.headers["content-encoding"]).toBeUndefined();
  });

  it("compresses pages but never stores them or answers 304: each holds its own token and nonce", async () => {
    const first = await get(app.url, "/", { "accept-encoding": "br" });
    expect(first.headers["cache-control"]).toBe("no-store");
    expect(first.headers.etag).toBeUndefined();
    expect(first.headers["last-modified"]).toBeUndefined();
    const again = await get(app.url, "/", { "accept-encoding": "br", "if-none-match": '"anything"', "if-modified-since": new Date().toUTCString() });
    expect(again.status).toBe(200);
    const nonce = (answer: BytesAnswer) => /nonce="([^"]+)"/.exec(decode(answer).toString("utf8"))?.[1];
    expect(nonce(again)).toBeDefined();
    expect(nonce(again)).not.toBe(nonce(first));
  });

  it("compresses a page over 1 KiB, its bootstrap included", async () => {
    const answer = await get(app.url, "/long.html", { "accept-encoding": "br" });
    expect(answer.headers["content-encoding"]).toBe("br");
    const html = decode(answer).toString("utf8");
    expect(html).toMatch(/<script nonce="[^"]+">window\.APP_CSRF_TOKEN = "[\w-]+";<\/script>/);
    expect(html).toContain("Slide 59");
  });

  it("never compresses RPC answers, streams or proxied bodies", async () => {
    const accept = { "accept-encoding": "br, gzip", "content-type": "application/json", cookie: viewer.cookie, "x-app-csrf": viewer.csrf };
    const big = await get(app.url, "/__rpc/plugin/probe/big", accept, "POST", "{}");
    expect([big.status, big.headers["content-encoding"]]).toEqual([200, undefined]);
    expect(JSON.parse(big.body.toString("utf8")).result.text).toHaveLength(8 * 1024);

    const stream = await openStream(app.url, "plugin/probe/words", { viewer, args: [50], headers: { "accept-encoding": "br, gzip" } });
    expect(stream.headers["content-encoding"]).toBeUndefined();
    expect(stream.headers["content-type"]).toMatch(/^application\/x-ndjson/);
    await stream.finished;
    expect(stream.records.filter((record) => "event" in record)).toHaveLength(50);

    const proxied = await get(app.url, "/proxy/up/text", { "accept-encoding": "br, gzip", cookie: viewer.cookie, "x-app-csrf": viewer.csrf });
    expect([proxied.status, proxied.headers["content-encoding"], proxied.body.toString("utf8")]).toEqual([200, undefined, "y".repeat(8 * 1024)]);
  });
});
