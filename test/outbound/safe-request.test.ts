// docs/guides/outbound-guard.md "safeRequest": xOpat's buffered request helper over the guard
// behind safeFetch, against real local upstreams (127.0.0.1 let through by the guard's
// allow list, as in safe-fetch.test.ts).
import { once } from "node:events";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { SsrfBlockedError, SsrfRedirectError, UpstreamResponseTooLargeError, UpstreamTimeoutError } from "../../src/outbound/errors.js";
import { configureDefaultGuard, createOutboundGuard, type OutboundGuardOptions } from "../../src/outbound/guard.js";
import { createSafeRequest, safeRequest, type SafeRequest } from "../../src/outbound/safe-request.js";

type Handler = (req: IncomingMessage, res: ServerResponse) => void;

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()?.();
});

async function listen(handler: Handler): Promise<number> {
  const server = createServer(handler);
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  cleanups.push(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });
  return (server.address() as AddressInfo).port;
}

/** An upstream on 127.0.0.1 and a safeRequest whose guard lets it through. */
async function upstream(handler: Handler, options: OutboundGuardOptions = {}): Promise<{ url: string; request: SafeRequest }> {
  const port = await listen(handler);
  const guard = createOutboundGuard({ allow: [`127.0.0.1:${port}`], ...options });
  cleanups.push(() => guard.close());
  return { url: `http://127.0.0.1:${port}`, request: createSafeRequest(guard) };
}

async function bodyOf(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

async function failure(promise: Promise<unknown>): Promise<Error & { code?: string; details?: Record<string, unknown> }> {
  const outcome = await promise.then(
    () => null,
    (error: unknown) => error,
  );
  expect(outcome).toBeInstanceOf(Error);
  return outcome as Error & { code?: string };
}

const never: Handler = () => {
  /* never answers */
};

describe("safeRequest", () => {
  it("sends a multipart POST with a Buffer body and its own Content-Length intact", async () => {
    let seen: { method?: string; headers?: IncomingMessage["headers"]; body?: Buffer } = {};
    const { url, request } = await upstream(async (req, res) => {
      seen = { method: req.method, headers: req.headers, body: await bodyOf(req) };
      res.end("stored");
    });
    const boundary = "----counterpart-boundary";
    const file = Buffer.from(Array.from({ length: 256 }, (_, i) => i)); // every byte value, NUL and 0xff included
    const body = Buffer.concat([
      Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="a.bin"\r\nContent-Type: application/octet-stream\r\n\r\n`),
      file,
      Buffer.from(`\r\n--${boundary}--\r\n`),
    ]);
    const res = await request(`${url}/upload?x=1`, {
      method: "POST",
      headers: { "Content-Type": `multipart/form-data; boundary=${boundary}`, "Content-Length": String(body.length), "X-Tags": ["a", "b"], "X-Count": 3 },
      body,
    });
    expect([res.status, res.ok, await res.text()]).toEqual([200, true, "stored"]);
    expect(seen.method).toBe("POST");
    expect(seen.body!.equals(body)).toBe(true);
    expect(seen.headers).toMatchObject({
      "content-type": `multipart/form-data; boundary=${boundary}`,
      "content-length": String(body.length),
      "x-tags": "a, b",
      "x-count": "3",
    });
  });

  it("sends a string body whole even when the caller's Content-Length counted characters, not bytes", async () => {
    let received: Buffer | undefined;
    const { url, request } = await upstream(async (req, res) => {
      received = await bodyOf(req);
      res.end(req.headers["content-length"]);
    });
    const text = "čeština ✓";
    const res = await request(url, { method: "PUT", headers: { "content-length": String(text.length) }, body: text });
    expect(await res.text()).toBe(String(Buffer.byteLength(text)));
    expect(received!.toString("utf8")).toBe(text);
  });

  it("resolves with status, lower-case headers and a body read by json(), text() and arrayBuffer()", async () => {
    const payload = { answer: 42, text: "žluťoučký" };
    const { url, request } = await upstream((_req, res) => {
      res.setHeader("Set-Cookie", ["a=1; Expires=Wed, 21 Oct 2037 07:28:00 GMT", "b=2"]);
      res.writeHead(201, { "Content-Type": "application/json", "X-Upstream": "yes" }).end(JSON.stringify(payload));
    });
    const res = await request(`${url}/item`);
    expect([res.status, res.ok]).toEqual([201, true]);
    expect(res.headers["content-type"]).toBe("application/json");
    expect(res.headers["x-upstream"]).toBe("yes");
    expect(res.headers["set-cookie"]).toEqual(["a=1; Expires=Wed, 21 Oct 2037 07:28:00 GMT", "b=2"]);
    expect(Object.getPrototypeOf(res.headers)).toBeNull();
    expect(await res.json()).toEqual(payload);
    expect(await res.text()).toBe(JSON.stringify(payload)); // the body can be read again, any way
    const bytes = await res.arrayBuffer();
    expect(Buffer.isBuffer(bytes)).toBe(true);
    expect(bytes.equals(Buffer.from(JSON.stringify(payload)))).toBe(true);
  });

  it("answers {} from json() for an empty body", async () => {
    const { url, request } = await upstream((_req, res) => res.writeHead(204).end());
    const res = await request(url, { method: "DELETE" });
    expect([res.status, res.ok]).toEqual([204, true]);
    expect(await res.json()).toEqual({});
    expect((await res.arrayBuffer()).length).toBe(0);
  });

  it("resolves with ok: false on a 500, its body readable", async () => {
    const { url, request } = await upstream((_req, res) => res.writeHead(500, { "content-type": "application/json" }).end('{"error":"down"}'));
    const res = await request(url);
    expect([res.status, res.ok]).toEqual([500, false]);
    expect(await res.json()).toEqual({ error: "down" });
  });

  it("rejects a redirect with safeFetch's SsrfRedirectError, without following it", async () => {
    let hits = 0;
    const { url, request } = await upstream((_req, res) => {
      hits += 1;
      res.writeHead(302, { location: "http://169.254.169.254/" }).end();
    });
    const err = await failure(request(url));
    expect(err).toBeInstanceOf(SsrfRedirectError);
    expect(err.details).toEqual({ status: 302, location: "http://169.254.169.254/" });
    expect(hits).toBe(1);
  });

  describe("the byte cap", () => {
    const KIB = Buffer.alloc(1024, "x");

    it("rejects a streamed body once it passes maxResponseBytes", async () => {
      const { url, request } = await upstream((_req, res) => {
        res.writeHead(200); // no Content-Length: chunked
        for (let i = 0; i < 4; i++) res.write(KIB);
        res.end();
      });
      const err = await failure(request(url, { maxResponseBytes: 3000 }));
      expect(err).toBeInstanceOf(UpstreamResponseTooLargeError);
      expect(err.code).toBe("UPSTREAM_RESPONSE_TOO_LARGE");
      expect(err.details).toEqual({ maxResponseBytes: 3000, status: 200 });
    });

    it("rejects a declared Content-Length over the cap before reading the body", async () => {
      const { url, request } = await upstream((_req, res) => {
        res.writeHead(200, { "content-length": String(4096) });
        res.write(KIB); // and the rest never comes: only the declared length can refuse it
      });
      const err = await failure(request(url, { maxResponseBytes: 2048, timeoutMs: 5_000 }));
      expect(err.code).toBe("UPSTREAM_RESPONSE_TOO_LARGE");
    });

    it("takes a body of exactly maxResponseBytes", async () => {
      const { url, request } = await upstream((_req, res) => res.end(KIB));
      const res = await request(url, { maxResponseBytes: 1024 });
      expect((await res.arrayBuffer()).length).toBe(1024);
    });

    it("refuses a cap that is not a positive number", async () => {
      const { url, request } = await upstream((_req, res) => res.end("x"));
      expect(await failure(request(url, { maxResponseBytes: 0 }))).toBeInstanceOf(TypeError);
    });
  });

  describe("time", () => {
    it("rejects with UPSTREAM_TIMEOUT after init.timeoutMs", async () => {
      const { url, request } = await upstream(never);
      const started = Date.now();
      const err = await failure(request(url, { timeoutMs: 150 }));
      expect(err).toBeInstanceOf(UpstreamTimeoutError);
      expect([err.code, err.name]).toEqual(["UPSTREAM_TIMEOUT", "TimeoutError"]);
      expect(err.details).toEqual({ timeoutMs: 150 });
      expect(Date.now() - started).toBeGreaterThanOrEqual(100);
      expect(Date.now() - started).toBeLessThan(5_000);
    });

    it("takes the guard's timeout by default", async () => {
      const { url, request } = await upstream(never, { timeoutMs: 200 });
      const err = await failure(request(url));
      expect([err.code, err.details]).toEqual(["UPSTREAM_TIMEOUT", { timeoutMs: 200 }]);
    });

    it("counts reading the body: headers in time and a stalled body still time out", async () => {
      const { url, request } = await upstream((_req, res) => {
        res.writeHead(200, { "content-type": "text/plain" });
        res.write("the start, and then nothing");
      });
      const err = await failure(request(url, { timeoutMs: 300 }));
      expect(err.code).toBe("UPSTREAM_TIMEOUT");
    });
  });

  describe("refusals and aborts", () => {
    it("rejects a private destination with SsrfBlockedError, before connecting", async () => {
      let hits = 0;
      const port = await listen((_req, res) => {
        hits += 1;
        res.end();
      });
      const guard = createOutboundGuard({ resolve: async () => [{ address: "10.1.2.3", family: 4 }] });
      cleanups.push(() => guard.close());
      const request = createSafeRequest(guard);
      const loopback = await failure(request(`http://127.0.0.1:${port}/`));
      expect(loopback).toBeInstanceOf(SsrfBlockedError);
      expect(loopback.details).toMatchObject({ reason: "loopback", address: "127.0.0.1" });
      const named = await failure(request("http://internal.example/"));
      expect([named.code, named.details?.reason]).toEqual(["SSRF_BLOCKED", "private"]);
      expect(hits).toBe(0);
    });

    it("the process-wide safeRequest uses the configured guard", async () => {
      const port = await listen((_req, res) => res.end("reached"));
      expect((await failure(safeRequest(`http://127.0.0.1:${port}/`))).code).toBe("SSRF_BLOCKED");
      configureDefaultGuard({ allow: [`127.0.0.1:${port}`] });
      cleanups.push(async () => configureDefaultGuard({}));
      expect(await (await safeRequest(`http://127.0.0.1:${port}/`)).text()).toBe("reached");
    });

    it("rejects with the signal's reason when the caller aborts", async () => {
      const { url, request } = await upstream(never);
      const controller = new AbortController();
      const reason = new Error("caller gave up");
      setTimeout(() => controller.abort(reason), 50);
      expect(await failure(request(url, { signal: controller.signal }))).toBe(reason);
    });

    it("rejects with the signal's reason while the body is being read", async () => {
      const controller = new AbortController();
      const { url, request } = await upstream((_req, res) => {
        res.writeHead(200);
        res.write("part");
        setTimeout(() => controller.abort(new Error("stop reading")), 50);
      });
      expect((await failure(request(url, { signal: controller.signal }))).message).toBe("stop reading");
    });

    it("rejects with an AbortError for a signal aborted without a reason, even one that timed out", async () => {
      const { url, request } = await upstream(never);
      const controller = new AbortController();
      controller.abort();
      expect((await failure(request(url, { signal: controller.signal }))).name).toBe("AbortError");
      // The caller's own deadline stays the caller's: its reason, not UPSTREAM_TIMEOUT.
      const own = await failure(request(url, { signal: AbortSignal.timeout(50) }));
      expect(own).toBeInstanceOf(DOMException);
      expect(own).not.toBeInstanceOf(UpstreamTimeoutError);
    });
  });
});
