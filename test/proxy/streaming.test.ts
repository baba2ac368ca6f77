// docs/guides/proxy.md "Streaming, time limits, failures": bodies stream both ways with backpressure and are never buffered
// whole; a client that goes away aborts the upstream request; an unreachable upstream
// answers 502, one that sends no headers in time 504; a failure after the headers cuts
// the client connection.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createHash } from "node:crypto";
import { request as httpRequest, type ClientRequest, type IncomingMessage } from "node:http";
import { join } from "node:path";
import { Transform } from "node:stream";
import { pipeline } from "node:stream/promises";
import { startServer, type TestServer } from "../helpers/server.js";
import { closedPort, openViewer, send, type Viewer } from "../helpers/http.js";
import { TestUpstream, generatedSha256, generatedStream } from "../helpers/upstream.js";

const ROOT = join(import.meta.dirname, "../fixtures/proxy-app");
const MB = 1024 * 1024;
const BIG = 100 * MB;

describe("proxy streaming", () => {
  let upstream: TestUpstream;
  let app: TestServer;
  let viewer: Viewer;
  let bigSha: string;
  beforeAll(async () => {
    upstream = await new TestUpstream().start();
    app = await startServer({
      root: ROOT,
      config: {
        server: {
          secure: {
            proxies: {
              open: { baseUrl: `${upstream.origin}/base` },
              down: { baseUrl: `http://127.0.0.1:${await closedPort()}/x` },
              slow: { baseUrl: `${upstream.origin}/slow`, timeoutMs: 300 },
              stall: { baseUrl: `${upstream.origin}/base`, timeoutMs: 300 },
            },
          },
        },
      },
    });
    viewer = await openViewer(app.url);
    bigSha = await generatedSha256(BIG);
  });
  afterAll(async () => {
    await app.close();
    await upstream.close();
  });

  /** Starts a request and resolves with the response (the body unread). */
  function open(path: string, options: { method?: string; headers?: Record<string, string> } = {}): { req: ClientRequest; response: Promise<IncomingMessage> } {
    const target = new URL(app.url);
    const req = httpRequest({
      host: target.hostname,
      port: target.port,
      path,
      method: options.method ?? "GET",
      headers: { cookie: viewer.cookie, "x-app-csrf": viewer.csrf, ...options.headers },
      agent: false,
    });
    const response = new Promise<IncomingMessage>((resolve, reject) => {
      req.on("response", resolve);
      req.on("error", reject);
    });
    return { req, response };
  }

  async function hashBody(res: IncomingMessage): Promise<{ bytes: number; sha256: string }> {
    const hash = createHash("sha256");
    let bytes = 0;
    for await (const chunk of res) {
      bytes += (chunk as Buffer).length;
      hash.update(chunk as Buffer);
    }
    return { bytes, sha256: hash.digest("hex") };
  }

  it("uploads 100 MB intact, streamed", async () => {
    const { req, response } = open("/proxy/open/upload", { method: "POST", headers: { "content-type": "application/octet-stream", "content-length": String(BIG) } });
    await pipeline(generatedStream(BIG), req);
    const res = await response;
    const body = JSON.parse(Buffer.concat(await res.toArray()).toString("utf8"));
    expect(res.statusCode).toBe(200);
    expect(body.bytes).toBe(BIG);
    expect(body.sha256).toBe(bigSha);
  });

  it("uploads 100 MB sent chunked (no Content-Length) intact", async () => {
    const { req, response } = open("/proxy/open/upload-chunked", { method: "PUT", headers: { "transfer-encoding": "chunked" } });
    await pipeline(generatedStream(BIG), req);
    const body = JSON.parse(Buffer.concat(await (await response).toArray()).toString("utf8"));
    expect([body.method, body.bytes, body.sha256]).toEqual(["PUT", BIG, bigSha]);
  });

  it("downloads 100 MB intact, streamed", async () => {
    const { req, response } = open(`/proxy/open/download?bytes=${BIG}`);
    req.end();
    const res = await response;
    expect(res.statusCode).toBe(200);
    expect(res.headers["content-length"]).toBe(String(BIG));
    expect(await hashBody(res)).toEqual({ bytes: BIG, sha256: bigSha });
  });

  it("holds the upstream back while the client does not read (download backpressure)", async () => {
    upstream.produced = 0;
    const { req, response } = open(`/proxy/open/download?bytes=${BIG}`);
    req.end();
    const res = await response;
    res.pause();
    await new Promise((resolve) => setTimeout(resolve, 700));
    // Only socket buffers' worth has left the upstream, nowhere near the whole body.
    expect(upstream.produced).toBeLessThan(40 * MB);
    expect(upstream.produced).toBeGreaterThan(0);
    const { bytes } = await hashBody(res);
    expect(bytes).toBe(BIG);
    expect(upstream.produced).toBe(BIG);
  });

  it("holds the client back while the upstream does not read (upload backpressure)", async () => {
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    upstream.routes.set("/lazy-reader", (upReq, upRes) => {
      upReq.pause();
      void released.then(() => {
        let bytes = 0;
        upReq.on("data", (chunk: Buffer) => (bytes += chunk.length));
        upReq.on("end", () => upRes.end(JSON.stringify({ bytes })));
        upReq.resume();
      });
    });
    let sent = 0;
    const counter = new Transform({
      transform(chunk: Buffer, _encoding, done) {
        sent += chunk.length;
        done(null, chunk);
      },
    });
    const { req, response } = open("/proxy/open/lazy-reader", { method: "POST", headers: { "content-length": String(BIG) } });
    const upload = pipeline(generatedStream(BIG), counter, req);
    await new Promise((resolve) => setTimeout(resolve, 700));
    expect(sent).toBeLessThan(40 * MB);
    expect(sent).toBeGreaterThan(0);
    release();
    await upload;
    const body = JSON.parse(Buffer.concat(await (await response).toArray()).toString("utf8"));
    expect(body.bytes).toBe(BIG);
  });

  describe("a client that goes away", () => {
    it("aborts the upstream request during the download", async () => {
      upstream.routes.set("/watch-stream", (_req, res) => {
        res.writeHead(200, { "content-type": "application/octet-stream" });
        res.write(Buffer.alloc(1024));
        const timer = setInterval(() => res.write(Buffer.alloc(1024)), 20);
        res.on("close", () => clearInterval(timer));
      });
      const { req, response } = open("/proxy/open/watch-stream");
      req.end();
      const res = await response;
      await new Promise((resolve) => res.once("data", resolve));
      req.destroy();
      const closed = upstream.closed.get("/base/watch-stream")!;
      await expect(withTimeout(closed, 3000)).resolves.toBe("done");
      await waitFor(() => app.logs.events("proxy.").some((line) => line.code === "PROXY_CLIENT_CLOSED" && line.status === 200));
    });

    it("aborts the upstream request while waiting for its headers", async () => {
      upstream.routes.set("/watch-silent", () => {
        // never answers
      });
      const { req, response } = open("/proxy/open/watch-silent");
      response.catch(() => undefined);
      req.end();
      await waitFor(() => upstream.closed.has("/base/watch-silent"));
      req.destroy();
      await expect(withTimeout(upstream.closed.get("/base/watch-silent")!, 3000)).resolves.toBe("done");
      await waitFor(() => app.logs.events("proxy.").some((line) => line.code === "PROXY_CLIENT_CLOSED" && line.status === 499));
    });

    it("closes a client that stalls its upload, which ends the upstream request", async () => {
      let received = 0;
      upstream.routes.set("/watch-stall", (upReq) => {
        upReq.on("data", (chunk: Buffer) => (received += chunk.length));
      });
      const { req, response } = open("/proxy/stall/watch-stall", { method: "POST", headers: { "content-length": String(BIG) } });
      response.catch(() => undefined);
      req.on("error", () => undefined);
      req.write(Buffer.alloc(10));
      // Nothing more is sent: past twice the alias's timeoutMs (300 ms) plus 1 s the client is closed.
      await expect(withTimeout(upstream.closed.get("/base/watch-stall") ?? waitFor(() => upstream.closed.has("/base/watch-stall")).then(() => upstream.closed.get("/base/watch-stall")!), 3000)).resolves.toBe("done");
      expect(received).toBeLessThan(BIG);
      req.destroy();
    });

    it("closes a client that stops reading a download once nothing moved for 2 × timeoutMs + 1 s", async () => {
      // The `stall` alias has timeoutMs 300.
      const idleMs = 2 * 300 + 1000;
      const { req, response } = open(`/proxy/stall/watch-unread/download?bytes=${BIG}`);
      req.end();
      const res = await response;
      await new Promise((resolve) => res.once("data", resolve));
      res.pause();
      // From here the buffers on the way fill, then nothing moves. Filling them can take a
      // while on a busy machine, so the upper bound counts from the last byte the upstream
      // could hand on (the proxy stops reading it once its client takes nothing more).
      const stoppedAt = performance.now();
      let lastMovedAt = stoppedAt;
      let produced = upstream.produced;
      const sampler = setInterval(() => {
        if (upstream.produced === produced) return;
        produced = upstream.produced;
        lastMovedAt = performance.now();
      }, 10);
      try {
        await waitFor(() => upstream.closed.has("/base/watch-unread/download"));
        await upstream.closed.get("/base/watch-unread/download");
      } finally {
        clearInterval(sampler);
      }
      const cutAt = performance.now();
      expect(cutAt - stoppedAt).toBeGreaterThan(idleMs - 50);
      // Sampling adds at most a fifth; the old cut came after twice the time.
      expect(cutAt - lastMovedAt).toBeLessThan(idleMs * 1.5);
      req.destroy();
    });

    it("keeps a client that reads a download in bursts with pauses shorter than that", async () => {
      const { req, response } = open(`/proxy/stall/watch-bursts/download?bytes=${10 * BIG}`);
      req.end();
      const res = await response;
      let read = 0;
      res.on("data", (chunk: Buffer) => (read += chunk.length));
      // A 20 ms burst of reading every 500 ms, for over twice the idle limit (1.6 s).
      for (let i = 0; i < 8; i++) {
        res.pause();
        await new Promise((resolve) => setTimeout(resolve, 480));
        res.resume();
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      expect(read).toBeGreaterThan(0);
      expect(read).toBeLessThan(10 * BIG);
      expect(await withTimeout(upstream.closed.get("/base/watch-bursts/download")!, 0)).toBe("timed out");
      expect(res.destroyed).toBe(false);
      req.destroy();
    });

    it("aborts the upstream request during the upload", async () => {
      let received = 0;
      upstream.routes.set("/watch-upload", (upReq) => {
        upReq.on("data", (chunk: Buffer) => (received += chunk.length));
      });
      const { req, response } = open("/proxy/open/watch-upload", { method: "POST", headers: { "content-length": String(BIG) } });
      response.catch(() => undefined);
      req.on("error", () => undefined);
      req.write(Buffer.alloc(MB));
      await waitFor(() => received > 0);
      req.destroy();
      await expect(withTimeout(upstream.closed.get("/base/watch-upload")!, 3000)).resolves.toBe("done");
      expect(received).toBeLessThan(BIG);
    });
  });

  describe("upstream failures", () => {
    it("answers 502 PROXY_UPSTREAM_ERROR when the upstream is unreachable", async () => {
      for (const method of ["GET", "POST"]) {
        const answer = await send(app.url, "/proxy/down/anything?q=1", { viewer, method, body: method === "POST" ? "payload" : undefined });
        expect([method, answer.status, answer.json]).toEqual([method, 502, { error: expect.any(String), code: "PROXY_UPSTREAM_ERROR", details: {} }]);
      }
      const logged = app.logs.events("proxy.").filter((line) => line.code === "PROXY_UPSTREAM_ERROR" && line.alias === "down");
      expect(logged.length).toBe(2);
      expect(logged[0]).toMatchObject({ event: "proxy.error", status: 502, reason: "ECONNREFUSED" });
    });

    it("answers 504 PROXY_UPSTREAM_TIMEOUT when no headers come within timeoutMs", async () => {
      upstream.routes.set("/slow/never", () => {
        // never answers
      });
      const started = performance.now();
      const answer = await send(app.url, "/proxy/slow/never", { viewer });
      const elapsed = performance.now() - started;
      expect([answer.status, answer.json]).toEqual([504, { error: expect.any(String), code: "PROXY_UPSTREAM_TIMEOUT", details: {} }]);
      expect(elapsed).toBeGreaterThanOrEqual(250);
      expect(elapsed).toBeLessThan(3000);
      expect(app.logs.events("proxy.").some((line) => line.code === "PROXY_UPSTREAM_TIMEOUT" && line.status === 504)).toBe(true);
    });

    it("does not time out a body that keeps coming after prompt headers", async () => {
      upstream.routes.set("/slow/trickle", (_req, res) => {
        res.writeHead(200, { "content-type": "text/plain" });
        let sent = 0;
        const timer = setInterval(() => {
          sent += 1;
          if (sent === 6) {
            clearInterval(timer);
            res.end("end");
          } else res.write(`${sent},`);
        }, 120);
      });
      const answer = await send(app.url, "/proxy/slow/trickle", { viewer });
      expect([answer.status, answer.body]).toEqual([200, "1,2,3,4,5,end"]);
    });

    it("cuts the client connection when the upstream fails after its headers", async () => {
      upstream.routes.set("/break", (_req, res) => {
        res.writeHead(200, { "content-type": "application/octet-stream", "content-length": "100000" });
        res.write(Buffer.alloc(1000), () => setTimeout(() => res.socket?.destroy(), 50));
      });
      const { req, response } = open("/proxy/open/break");
      req.end();
      const res = await response;
      expect(res.statusCode).toBe(200);
      const outcome = await new Promise<string>((resolve) => {
        let bytes = 0;
        res.on("data", (chunk: Buffer) => (bytes += chunk.length));
        res.on("end", () => resolve(`complete after ${bytes}`));
        res.on("aborted", () => resolve("aborted"));
        res.on("error", () => resolve("aborted"));
      });
      expect(outcome).toBe("aborted");
      await waitFor(() => app.logs.events("proxy.").some((line) => line.code === "PROXY_UPSTREAM_ERROR" && line.status === 200));
    });

    it("answers 502 when the upstream closes the connection without answering", async () => {
      upstream.routes.set("/hangup", (req) => req.socket.destroy());
      const answer = await send(app.url, "/proxy/open/hangup", { viewer });
      expect([answer.status, answer.json.code]).toEqual([502, "PROXY_UPSTREAM_ERROR"]);
    });
  });
});

async function withTimeout(promise: Promise<unknown>, ms: number): Promise<string> {
  return Promise.race([promise.then(() => "done"), new Promise<string>((resolve) => setTimeout(() => resolve("timed out"), ms))]);
}

async function waitFor(check: () => boolean, ms = 3000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error("condition not met in time");
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
