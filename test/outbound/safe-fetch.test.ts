import { once } from "node:events";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { Readable } from "node:stream";
import { createServer as createTlsServer } from "node:tls";
import { afterEach, describe, expect, it } from "vitest";
import { SsrfBlockedError, SsrfRedirectError } from "../../src/outbound/errors.js";
import { createOutboundGuard, type OutboundGuard, type OutboundGuardOptions } from "../../src/outbound/guard.js";

type Handler = (req: IncomingMessage, res: ServerResponse) => void;

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()?.();
});

async function listen(handler: Handler, host = "127.0.0.1", port = 0): Promise<{ server: Server; port: number }> {
  const server = createServer(handler);
  server.listen(port, host);
  await once(server, "listening");
  cleanups.push(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });
  return { server, port: (server.address() as AddressInfo).port };
}

function guardFor(options: OutboundGuardOptions): OutboundGuard {
  const guard = createOutboundGuard(options);
  cleanups.push(() => guard.close());
  return guard;
}

async function failure(promise: Promise<unknown>): Promise<Error & { code?: string; details?: Record<string, unknown> }> {
  const outcome = await promise.then(
    () => null,
    (error: unknown) => error,
  );
  expect(outcome).toBeInstanceOf(Error);
  return outcome as Error & { code?: string };
}

describe("safeFetch against an allowed loopback upstream", () => {
  it.each([301, 302, 303, 307, 308])("refuses a %i redirect with SSRF_REDIRECT", async (status) => {
    let hits = 0;
    const { port } = await listen((_req, res) => {
      hits += 1;
      res.writeHead(status, { location: "http://169.254.169.254/latest/meta-data/" }).end("moved");
    });
    const guard = guardFor({ allow: [`127.0.0.1:${port}`] });
    const err = await failure(guard.safeFetch(`http://127.0.0.1:${port}/start`));
    expect(err).toBeInstanceOf(SsrfRedirectError);
    expect(err.code).toBe("SSRF_REDIRECT");
    expect(err.details).toEqual({ status, location: "http://169.254.169.254/latest/meta-data/" });
    expect(hits).toBe(1); // the Location was not followed
  });

  it("refuses a 3xx without a Location too", async () => {
    const { port } = await listen((_req, res) => res.writeHead(304).end());
    const guard = guardFor({ allow: [`127.0.0.1:${port}`] });
    const err = await failure(guard.safeFetch(`http://127.0.0.1:${port}/`));
    expect(err.code).toBe("SSRF_REDIRECT");
    expect(err.details).toEqual({ status: 304, location: null });
  });

  it("streams a 200 body", async () => {
    const { port } = await listen((_req, res) => {
      res.writeHead(200, { "content-type": "text/plain" });
      res.write("first chunk, ");
      setTimeout(() => res.end("second chunk"), 20);
    });
    const guard = guardFor({ allow: [`127.0.0.1:${port}`] });
    const res = await guard.safeFetch(`http://127.0.0.1:${port}/`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("text/plain");
    const chunks: string[] = [];
    const decoder = new TextDecoder();
    for await (const chunk of res.body!) chunks.push(decoder.decode(chunk, { stream: true }));
    expect(chunks.join("")).toBe("first chunk, second chunk");
  });

  it("passes method, headers and a string body through", async () => {
    const { port } = await listen((req, res) => {
      let body = "";
      req.setEncoding("utf8");
      req.on("data", (chunk: string) => (body += chunk));
      req.on("end", () => res.end(JSON.stringify({ method: req.method, header: req.headers["x-test"], body })));
    });
    const guard = guardFor({ allow: [`127.0.0.1:${port}`] });
    const res = await guard.safeFetch(`http://127.0.0.1:${port}/`, {
      method: "POST",
      headers: { "x-test": "yes", "content-type": "text/plain" },
      body: "hello upstream",
    });
    expect(await res.json()).toEqual({ method: "POST", header: "yes", body: "hello upstream" });
  });

  it("sends a streamed body (duplex: half)", async () => {
    const { port } = await listen((req, res) => {
      let body = "";
      req.setEncoding("utf8");
      req.on("data", (chunk: string) => (body += chunk));
      req.on("end", () => res.end(body));
    });
    const guard = guardFor({ allow: [`127.0.0.1:${port}`] });
    const fromNode = await guard.safeFetch(`http://127.0.0.1:${port}/`, { method: "PUT", body: Readable.from(["a", "b", "c"]) });
    expect(await fromNode.text()).toBe("abc");
    const web = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(new TextEncoder().encode("web "));
        controller.enqueue(new TextEncoder().encode("stream"));
        controller.close();
      },
    });
    const fromWeb = await guard.safeFetch(`http://127.0.0.1:${port}/`, { method: "PUT", body: web });
    expect(await fromWeb.text()).toBe("web stream");
  });

  it("still blocks the allowed host on another port, before connecting", async () => {
    let hits = 0;
    const allowed = await listen((_req, res) => res.end("allowed"));
    const other = await listen((_req, res) => {
      hits += 1;
      res.end("other");
    });
    const guard = guardFor({ allow: [`127.0.0.1:${allowed.port}`] });
    const err = await failure(guard.safeFetch(`http://127.0.0.1:${other.port}/`));
    expect(err).toBeInstanceOf(SsrfBlockedError);
    expect(err.code).toBe("SSRF_BLOCKED");
    expect(err.details).toMatchObject({ reason: "loopback", address: "127.0.0.1" });
    expect(hits).toBe(0);
  });

  it("reaches an allowed IPv6 literal (brackets stripped for the socket)", async (ctx) => {
    const upstream = await listen((req, res) => res.end(`v6 ${req.headers.host}`), "::1").catch(() => null);
    if (upstream === null) return ctx.skip(); // no IPv6 loopback on this machine
    const guard = guardFor({ allow: [`[::1]:${upstream.port}`] });
    const res = await guard.safeFetch(`http://[::1]:${upstream.port}/`);
    expect(await res.text()).toBe(`v6 [::1]:${upstream.port}`);
  });

  it("blocks schemes and private targets without any network access", async () => {
    const guard = guardFor({ resolve: async () => [{ address: "10.1.2.3", family: 4 }] });
    expect((await failure(guard.safeFetch("file:///etc/passwd"))).details).toMatchObject({ reason: "scheme" });
    expect((await failure(guard.safeFetch("http://internal.example/"))).details).toMatchObject({
      reason: "private",
      address: "10.1.2.3",
    });
  });

  it("aborts when the caller's signal aborts", async () => {
    const { port } = await listen(() => {
      /* never answers */
    });
    const guard = guardFor({ allow: [`127.0.0.1:${port}`] });
    const controller = new AbortController();
    setTimeout(() => controller.abort(new Error("caller gave up")), 50);
    const started = Date.now();
    const err = await failure(guard.safeFetch(`http://127.0.0.1:${port}/`, { signal: controller.signal }));
    expect(err.message).toBe("caller gave up");
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it("rejects at once for an already-aborted signal, before resolving the name", async () => {
    let lookups = 0;
    const guard = guardFor({
      resolve: async () => {
        lookups += 1;
        return [{ address: "93.184.215.14", family: 4 }];
      },
    });
    const err = await failure(guard.safeFetch("http://example.com/", { signal: AbortSignal.abort() }));
    expect(err.name).toBe("AbortError");
    expect(lookups).toBe(0);
  });

  it("times out on an upstream that never answers", async () => {
    const { port } = await listen(() => {
      /* never answers */
    });
    const guard = guardFor({ allow: [`127.0.0.1:${port}`], timeoutMs: 200 });
    const started = Date.now();
    const err = await failure(guard.safeFetch(`http://127.0.0.1:${port}/`));
    expect(err.name).toBe("TimeoutError");
    expect(Date.now() - started).toBeGreaterThanOrEqual(150);
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it("times out on a resolver that never answers", async () => {
    const guard = guardFor({ timeoutMs: 100, resolve: () => new Promise(() => {}) });
    const err = await failure(guard.safeFetch("http://slow-dns.test/"));
    expect(err.name).toBe("TimeoutError");
  });

  it("lets one call override the timeout", async () => {
    const { port } = await listen(() => {
      /* never answers */
    });
    const guard = guardFor({ allow: [`127.0.0.1:${port}`] });
    const err = await failure(guard.safeFetch(`http://127.0.0.1:${port}/`, { timeoutMs: 100 }));
    expect(err.name).toBe("TimeoutError");
  });
});

describe("safeFetch connects only to the address it validated", () => {
  it("does not ask DNS again: a rebinding answer on a second lookup is never used", async () => {
    const { port } = await listen((req, res) => res.end(`reached 127.0.0.1 as ${req.headers.host}`));
    const calls: string[] = [];
    const guard = guardFor({
      allow: ["pinned.test"],
      // First answer: the real server. Any later answer: an address nothing listens on.
      resolve: async (hostname) => {
        calls.push(hostname);
        return [{ address: calls.length === 1 ? "127.0.0.1" : "127.0.0.2", family: 4 }];
      },
    });
    const res = await guard.safeFetch(`http://pinned.test:${port}/`);
    expect(await res.text()).toBe(`reached 127.0.0.1 as pinned.test:${port}`);
    expect(calls).toEqual(["pinned.test"]);
  });

  it("never reuses a pooled connection for a different validated address", async (ctx) => {
    const first = await listen((_req, res) => res.end("server on 127.0.0.1"));
    // Same port on another loopback address; Linux routes all of 127/8 to lo.
    const second = await listen((_req, res) => res.end("server on 127.0.0.2"), "127.0.0.2", first.port).catch(() => null);
    if (second === null) return ctx.skip();
    let answer = "127.0.0.1";
    const guard = guardFor({ allow: ["pinned.test"], resolve: async () => [{ address: answer, family: 4 }] });
    const url = `http://pinned.test:${first.port}/`;
    expect(await (await guard.safeFetch(url)).text()).toBe("server on 127.0.0.1"); // keep-alive socket now pooled
    answer = "127.0.0.2";
    expect(await (await guard.safeFetch(url)).text()).toBe("server on 127.0.0.2");
    answer = "127.0.0.1";
    expect(await (await guard.safeFetch(url)).text()).toBe("server on 127.0.0.1");
  });

  it("keeps the original host name for TLS SNI while connecting to the pinned address", async () => {
    const sni: string[] = [];
    // No certificate needed: the server records the ClientHello's server name and hangs up.
    const server = createTlsServer({
      SNICallback: (servername, callback) => {
        sni.push(servername);
        callback(new Error("test server stops after SNI"));
      },
    });
    server.on("tlsClientError", () => {});
    server.listen(0, "127.0.0.1");
    await once(server, "listening");
    cleanups.push(() => new Promise((resolve) => server.close(() => resolve())));
    const { port } = server.address() as AddressInfo;
    const guard = guardFor({ allow: ["pinned.test"], resolve: async () => [{ address: "127.0.0.1", family: 4 }] });
    const err = await failure(guard.safeFetch(`https://pinned.test:${port}/`));
    expect(err.code).toBeUndefined(); // a network error, not a guard block
    expect(sni).toEqual(["pinned.test"]);
  });
});
