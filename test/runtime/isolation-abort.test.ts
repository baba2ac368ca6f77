// docs/guides/server-methods.md "Runtime protections", worker isolation: on timeout an isolated method's
// `ctx.signal` fires first and its abort handler gets `abortGraceMs` to run; only a method
// still running after that has its worker terminated. The caller's 504 never waits.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createServer, type Server } from "node:http";
import { join } from "node:path";
import { startServer, type TestServer } from "../helpers/server.js";
import { openViewer, rpc, type Viewer } from "../helpers/http.js";

const ROOT = join(import.meta.dirname, "../fixtures/runtime-app");
const TIMEOUT_MS = 300; // the fixture methods' timeoutMs
const GRACE_MS = 1_000;
const THREADS = 4;

/** A tiny server the isolated methods report to from their abort handlers. */
class Reports {
  readonly seen: Array<{ path: string; at: number }> = [];
  readonly #server: Server = createServer((req, res) => {
    this.seen.push({ path: req.url ?? "", at: performance.now() });
    res.end("ok");
  });
  url = "";

  async start(): Promise<void> {
    await new Promise<void>((resolve) => this.#server.listen(0, "127.0.0.1", resolve));
    this.url = `http://127.0.0.1:${(this.#server.address() as { port: number }).port}`;
  }

  paths(prefix: string): string[] {
    return this.seen.map((entry) => entry.path).filter((path) => path.startsWith(prefix));
  }

  async waitFor(prefix: string, count: number, withinMs: number): Promise<string[]> {
    const until = performance.now() + withinMs;
    while (this.paths(prefix).length < count && performance.now() < until) await sleep(20);
    return this.paths(prefix);
  }

  close(): Promise<void> {
    this.#server.closeAllConnections();
    return new Promise((resolve) => this.#server.close(() => resolve()));
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe("isolated methods on timeout", () => {
  let app: TestServer;
  let viewer: Viewer;
  const reports = new Reports();
  beforeAll(async () => {
    await reports.start();
    app = await startServer({
      root: ROOT,
      config: {
        server: { rpc: { isolation: { minThreads: THREADS, maxThreads: THREADS, abortGraceMs: GRACE_MS } } },
        modules: { iso: { answer: 42 } },
      },
    });
    viewer = await openViewer(app.url);
    // Every worker up and its module loaded before the first test: a call that times out
    // while it still waits for a worker never runs, so its abort handler could not report.
    for (let round = 0; round < 3; round += 1) {
      await Promise.all(Array.from({ length: THREADS }, () => rpc(app.url, "module/iso/context", { viewer })));
    }
  });
  afterAll(async () => {
    await app?.close();
    await reports.close();
  });

  const call = async (method: string, args: unknown[]) => {
    const started = performance.now();
    const answer = await rpc(app.url, `module/iso/${method}`, { viewer, body: { args } });
    return { ...answer, elapsedMs: performance.now() - started };
  };

  it("runs the abort handler of every method timing out at once, and answers 504 at the timeout", async () => {
    const tags = Array.from({ length: THREADS }, (_, i) => `cleanup-${i}`);
    const answers = await Promise.all(tags.map((tag) => call("reportsAbort", [reports.url, tag])));
    for (const answer of answers) {
      expect([answer.status, answer.body.code]).toEqual([504, "RPC_TIMEOUT"]);
      // Answered at the timeout, not after the grace.
      expect(answer.elapsedMs).toBeLessThan(TIMEOUT_MS + GRACE_MS * 0.7);
    }
    const seen = await reports.waitFor("/aborted/cleanup-", THREADS, GRACE_MS * 3);
    expect(seen.sort()).toEqual(tags.map((tag) => `/aborted/${tag}`).sort());
  });

  it("terminates the worker of a method that ignores its signal after the grace, while other calls are answered", async () => {
    const lateMs = GRACE_MS * 2;
    const tags = Array.from({ length: THREADS }, (_, i) => `stubborn-${i}`);
    const started = performance.now();
    const answers = await Promise.all(tags.map((tag) => call("ignoresSignal", [reports.url, tag, lateMs])));
    for (const answer of answers) expect([answer.status, answer.body.code]).toEqual([504, "RPC_TIMEOUT"]);
    // Their signals fired: each saw its abort.
    expect((await reports.waitFor("/aborted/stubborn-", THREADS, GRACE_MS)).length).toBe(THREADS);
    // Meanwhile every worker is still held: inline calls are answered all the same.
    expect((await call("inlineEcho", ["still here"])).body.result).toBe("still here");
    // After the grace the workers are terminated and replaced: isolated calls run again...
    await sleep(Math.max(0, started + TIMEOUT_MS + GRACE_MS + 300 - performance.now()));
    // On a loaded machine the replacement threads may take longer to start than the
    // method's 500 ms timeout: a 504 then is the restart still under way, so ask again.
    let next = await call("context", ["after"]);
    for (let attempt = 1; next.status === 504 && attempt < 10; attempt++) next = await call("context", ["after"]);
    expect(next.status).toBe(200);
    expect(next.body.result.args).toEqual(["after"]);
    // ...and none of the stubborn methods lived on to report late.
    await sleep(Math.max(0, started + TIMEOUT_MS + lateMs + 500 - performance.now()));
    expect(reports.paths("/still-running/")).toEqual([]);
  });
});

describe("an isolated call that times out while it waits for a worker", () => {
  let app: TestServer;
  let viewer: Viewer;
  const reports = new Reports();
  beforeAll(async () => {
    await reports.start();
    // One thread, and a grace long enough for the worker to be free again before it ends.
    app = await startServer({
      root: ROOT,
      config: { server: { rpc: { isolation: { minThreads: 1, maxThreads: 1, abortGraceMs: 5_000 } } }, modules: { iso: { answer: 42 } } },
    });
    viewer = await openViewer(app.url);
    // The worker up and its module loaded first (`context` allows 5 s for it): on a busy
    // machine a cold start takes longer than the 300 ms `reportsStart` allows.
    expect((await rpc(app.url, "module/iso/context", { viewer })).status).toBe(200);
  });
  afterAll(async () => {
    await app?.close();
    await reports.close();
  });

  const call = (method: string, args: unknown[]) => rpc(app.url, `module/iso/${method}`, { viewer, body: { args } });

  it("answers 504 and never runs, even when the worker frees up before the grace ends", async () => {
    // The method works when a worker is free.
    expect((await call("reportsStart", [reports.url, "free"])).body).toEqual({ result: "free" });
    expect(reports.paths("/started/")).toEqual(["/started/free?aborted=false"]);

    const holding = call("holdsWorker", [reports.url, 1_500]);
    expect(await reports.waitFor("/holding", 1, 5_000)).toEqual(["/holding"]);
    const late = await call("reportsStart", [reports.url, "late"]);
    expect([late.status, late.body.code]).toEqual([504, "RPC_TIMEOUT"]);
    expect((await holding).body).toEqual({ result: "released" });
    // The worker is free again, long before the late call's grace would end.
    expect((await call("reportsStart", [reports.url, "after"])).body).toEqual({ result: "after" });
    await sleep(300);
    expect(reports.paths("/started/")).toEqual(["/started/free?aborted=false", "/started/after?aborted=false"]);
  });
});
