// docs/guides/server-methods.md "Runtime protections": an answer given while the client is still uploading (413,
// a refused call) reaches the client — the server closes with a lingering close, so the
// kernel does not reset the connection under the answer — and the server still reads
// only a bounded amount of what it does not want. The server runs in a process of its
// own (`node index.js`): sharing one event loop with the clients hides the race in which
// the reset overtakes the answer.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mkdtempSync, writeFileSync } from "node:fs";
import { request as httpRequest } from "node:http";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { TEST_SESSION_SECRET } from "../helpers/server.js";
import { openViewer } from "../helpers/http.js";
import { startEntrypoint, type RunningProcess } from "../helpers/process.js";

const ROOT = join(import.meta.dirname, "../fixtures/gateway-app");
/** Uploads at once, so that both processes are busy when the answers go out. */
const AT_ONCE = 8;
const MB = 1024 * 1024;
const UPLOAD = 8 * MB;
const CHUNK = Buffer.alloc(64 * 1024, 0x61);

/** Resolves on the next "drain", or on "close" (nothing will drain any more). */
function drained(stream: NodeJS.EventEmitter): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      stream.off("drain", done);
      stream.off("close", done);
      resolve();
    };
    stream.on("drain", done);
    stream.on("close", done);
  });
}

interface Answer {
  status: number;
  body: any;
  connection: string | undefined;
}

/** node:http uploading `UPLOAD` bytes in 64 KiB chunks, honouring backpressure. */
function nodeUpload(url: string, path: string, headers: Record<string, string>, chunked: boolean): Promise<Answer> {
  const target = new URL(url);
  return new Promise((resolve, reject) => {
    let answered = false;
    const req = httpRequest(
      {
        host: target.hostname,
        port: target.port,
        path,
        method: "POST",
        agent: false,
        headers: { "content-type": "application/json", ...headers, ...(chunked ? {} : { "content-length": String(UPLOAD) }) },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (chunk: Buffer) => chunks.push(chunk));
        res.on("end", () => {
          answered = true;
          const text = Buffer.concat(chunks).toString("utf8");
          resolve({ status: res.statusCode ?? 0, body: JSON.parse(text), connection: res.headers.connection });
        });
        res.on("error", (error) => {
          if (!answered) reject(error);
        });
      },
    );
    // Once the answer is in, the end of the upload may fail: that is expected.
    req.on("error", (error) => {
      if (!answered) reject(error);
    });
    let closed = false;
    req.on("close", () => {
      closed = true;
    });
    void (async () => {
      for (let sent = 0; sent < UPLOAD && !closed; sent += CHUNK.length) {
        if (!req.write(CHUNK)) await drained(req);
      }
      if (!closed) req.end();
    })();
  });
}

/** undici (global fetch) uploading `UPLOAD` bytes: a Buffer (Content-Length) or a stream (chunked). */
async function fetchUpload(url: string, path: string, headers: Record<string, string>, chunked: boolean): Promise<Answer> {
  const body = chunked
    ? new ReadableStream<Uint8Array>({
        start(controller) {
          for (let sent = 0; sent < UPLOAD; sent += CHUNK.length) controller.enqueue(new Uint8Array(CHUNK));
          controller.close();
        },
      })
    : Buffer.alloc(UPLOAD, 0x61);
  const response = await fetch(url + path, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body,
    ...(chunked ? { duplex: "half" } : {}),
  } as RequestInit);
  return { status: response.status, body: await response.json(), connection: response.headers.get("connection") ?? undefined };
}

interface Endless {
  statusLine: string;
  /** Bytes the client's socket accepted before the server cut it. */
  written: number;
  /** From the first answer byte to the cut. */
  cutAfterMs: number;
}

/**
 * A raw client that keeps sending a chunked body and never stops on its own: `pace` null
 * sends as fast as the socket takes it, else one 1 KiB chunk every `pace` ms, after a first
 * silence of `quietMs`. It ignores the server's half-close, so only the server's cut ends
 * it (seen at its second write after the cut: the first only draws the reset).
 */
function endlessUpload(url: string, path: string, headers: Record<string, string>, pace: number | null, quietMs = 0, method = "POST"): Promise<Endless> {
  const target = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect({ host: target.hostname, port: Number(target.port), allowHalfOpen: true });
    let received = "";
    let answeredAt = 0;
    let written = 0;
    let done = false;
    const finish = () => {
      if (done) return;
      done = true;
      if (answeredAt === 0) reject(new Error(`cut before any answer: ${received}`));
      else resolve({ statusLine: received.split("\r\n")[0]!, written, cutAfterMs: performance.now() - answeredAt });
    };
    socket.on("data", (chunk: Buffer) => {
      if (answeredAt === 0) answeredAt = performance.now();
      received += chunk.toString("latin1");
    });
    socket.on("error", finish);
    socket.on("close", finish);
    const head = Object.entries({ host: target.host, "content-type": "application/json", "transfer-encoding": "chunked", ...headers })
      .map(([name, value]) => `${name}: ${value}\r\n`)
      .join("");
    socket.write(`${method} ${path} HTTP/1.1\r\n${head}\r\n`);
    const chunk = pace === null ? CHUNK : CHUNK.subarray(0, 1024);
    const frame = Buffer.concat([Buffer.from(`${chunk.length.toString(16)}\r\n`), chunk, Buffer.from("\r\n")]);
    void (async () => {
      let first = true;
      while (!done && !socket.destroyed) {
        const more = socket.write(frame, (error) => {
          if (!error) written += frame.length;
        });
        if (pace !== null) await new Promise((wake) => setTimeout(wake, first ? quietMs || pace : pace));
        else if (!more) await drained(socket);
        first = false;
      }
    })();
  });
}

type Upload = (url: string, path: string, headers: Record<string, string>, chunked: boolean) => Promise<Answer>;

/** `AT_ONCE` uploads in parallel, twice, with each client: every answer. */
async function uploads(url: string, path: string, headers: Record<string, string>, chunked: boolean): Promise<Answer[]> {
  const answers: Answer[] = [];
  for (const upload of [nodeUpload, fetchUpload] as Upload[]) {
    for (let round = 0; round < 2; round++) {
      answers.push(...(await Promise.all(Array.from({ length: AT_ONCE }, () => upload(url, path, headers, chunked)))));
    }
  }
  return answers;
}

describe("an early answer to an upload reaches the client", () => {
  let app: RunningProcess;
  let url: string;
  let auth: Record<string, string>;
  beforeAll(async () => {
    const config = join(mkdtempSync(join(tmpdir(), "linger-")), "app.config.json");
    writeFileSync(config, JSON.stringify({ server: { secure: { proxies: { up: { baseUrl: "http://127.0.0.1:9/never" } } } } }));
    app = await startEntrypoint(["--root", ROOT, "--port", "0", "--config", config], { APP_SESSION_SECRET: TEST_SESSION_SECRET });
    url = app.url;
    const viewer = await openViewer(url);
    auth = { cookie: viewer.cookie, "x-app-csrf": viewer.csrf };
  });
  afterAll(() => app?.stop("SIGKILL"));

  for (const chunked of [false, true]) {
    const framing = chunked ? "chunked" : "Content-Length";
    it(`RPC 413 to node:http and to fetch, ${framing}`, async () => {
      for (const answer of await uploads(url, "/__rpc/plugin/matrix/echo", auth, chunked)) {
        expect(answer).toMatchObject({ status: 413, body: { code: "RPC_PAYLOAD_TOO_LARGE" }, connection: "close" });
      }
    });

    it(`Fastify's own 413 on a non-RPC route, ${framing}`, async () => {
      for (const answer of await uploads(url, "/somewhere/else", {}, chunked)) {
        expect(answer).toMatchObject({ status: 413, body: { code: "PAYLOAD_TOO_LARGE" }, connection: "close" });
      }
    });

    it(`an RPC call refused before its body is read, ${framing}`, async () => {
      for (const answer of await uploads(url, "/__rpc/plugin/matrix/echo", {}, chunked)) {
        expect(answer).toMatchObject({ status: 401, body: { code: "RPC_NO_SESSION" }, connection: "close" });
      }
    });

    it(`a proxy call refused before forwarding, ${framing}`, async () => {
      for (const answer of await uploads(url, "/proxy/up/x", {}, chunked)) {
        expect(answer).toMatchObject({ status: 401, body: { code: "PROXY_NO_SESSION" }, connection: "close" });
      }
      for (const answer of await uploads(url, "/proxy/nope/x", auth, chunked)) {
        expect(answer).toMatchObject({ status: 404, body: { code: "PROXY_UNKNOWN_ALIAS" }, connection: "close" });
      }
    });
  }

  describe("what the server reads after answering is bounded", () => {
    it("cuts a client that sends as fast as it can after a few MiB", async () => {
      for (const [path, headers, status] of [
        ["/__rpc/plugin/matrix/echo", auth, "413"],
        ["/somewhere/else", {}, "413"],
        ["/proxy/up/x", {}, "401"],
      ] as const) {
        const result = await endlessUpload(url, path, headers, null);
        expect(result.statusLine).toBe(`HTTP/1.1 ${status} ${status === "413" ? "Payload Too Large" : "Unauthorized"}`);
        // 4 MiB read and thrown away, plus what the two kernels buffer on loopback.
        expect(result.written).toBeLessThan(48 * MB);
        expect(result.cutAfterMs).toBeLessThan(5_000);
      }
    });

    it("cuts a client that sends a body nobody reads to a static route", async () => {
      // Node would drain it for ever to keep the connection alive.
      const result = await endlessUpload(url, "/health", {}, null, 0, "GET");
      expect(result.statusLine).toBe("HTTP/1.1 200 OK");
      expect(result.written).toBeLessThan(48 * MB);
      expect(result.cutAfterMs).toBeLessThan(5_000);
    });

    it("cuts a client that trickles for ever after about two seconds", async () => {
      const result = await endlessUpload(url, "/proxy/up/x", {}, 20);
      expect(result.statusLine).toMatch(/^HTTP\/1\.1 401/);
      expect(result.cutAfterMs).toBeGreaterThan(1_500);
      expect(result.cutAfterMs).toBeLessThan(6_000);
    });

    it("keeps the connection when a refused call's small body arrives after the answer", async () => {
      // The headers alone, then (once the 401 is in) the 16 declared bytes and a second call.
      const socket = connect(Number(new URL(url).port), "127.0.0.1");
      const head = (length: number) => `POST /__rpc/plugin/matrix/echo HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${length}\r\n\r\n`;
      let received = "";
      const answers = (count: number) =>
        new Promise<void>((resolve, reject) => {
          const check = () => (received.split("HTTP/1.1 401").length - 1 >= count ? resolve() : undefined);
          socket.on("data", (chunk: Buffer) => ((received += chunk.toString("latin1")), check()));
          socket.once("close", () => reject(new Error(`closed after: ${received}`)));
          check();
        });
      socket.write(head(16));
      await answers(1);
      expect(received).toMatch(/connection: keep-alive/i);
      socket.write('{"args":["late"]}'.slice(0, 16) + head(2) + "{}");
      await answers(2);
      socket.destroy();
    });

    it("cuts a refused call whose small declared body never comes, after about two seconds", async () => {
      const socket = connect(Number(new URL(url).port), "127.0.0.1");
      const started = performance.now();
      let received = "";
      socket.on("data", (chunk: Buffer) => (received += chunk.toString("latin1")));
      socket.write("POST /__rpc/plugin/matrix/echo HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n");
      await new Promise((resolve) => socket.once("close", resolve));
      expect(received).toMatch(/^HTTP\/1\.1 401/);
      expect(performance.now() - started).toBeGreaterThan(1_500);
      expect(performance.now() - started).toBeLessThan(6_000);
    });

    it("cuts a client that goes quiet sooner", async () => {
      // Quiet for a second after its first chunk, then a chunk every 50 ms: cut during the silence.
      const result = await endlessUpload(url, "/proxy/up/x", {}, 50, 1_000);
      expect(result.statusLine).toMatch(/^HTTP\/1\.1 401/);
      expect(result.cutAfterMs).toBeLessThan(1_800);
    });
  });
});
