// docs/guides/server-methods.md "Runtime protections": timeouts, concurrency queues, breakers — real concurrency
// over real HTTP with small timeouts.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { join } from "node:path";
import { request as httpRequest } from "node:http";
import { startServer, type TestServer } from "../helpers/server.js";
import { openViewer, rawRequest, rpc, type Viewer } from "../helpers/http.js";

const ROOT = join(import.meta.dirname, "../fixtures/runtime-app");
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

let app: TestServer;
let viewer: Viewer;
beforeAll(async () => {
  app = await startServer({ root: ROOT, config: { server: { rpc: { timeoutMs: 250 } } } });
  viewer = await openViewer(app.url);
});
afterAll(() => app.close());
beforeEach(async () => {
  await rpc(app.url, "plugin/rt/reset");
});

const call = (method: string, args: unknown[] = []) => rpc(app.url, `plugin/rt/${method}`, { viewer, body: { args } });
const stats = async () => (await rpc(app.url, "plugin/rt/stats")).body.result;

describe("timeouts", () => {
  it("answers 504 RPC_TIMEOUT when timeoutMs passes, and aborts ctx.signal so the method stops", async () => {
    const started = Date.now();
    const answer = await call("slow", [2000]);
    expect([answer.status, answer.body.code]).toEqual([504, "RPC_TIMEOUT"]);
    expect(answer.body.details).toEqual({ timeoutMs: 150 });
    expect(Date.now() - started).toBeLessThan(1500);
    await sleep(20);
    expect((await stats()).aborts).toEqual([{ tag: "slow", reason: "TimeoutError" }]);
  });

  it("answers 408 RPC_BODY_TIMEOUT when the body does not arrive within timeoutMs", async () => {
    const started = Date.now();
    const answer = await rawRequest(app.url, {
      path: "/__rpc/plugin/rt/slow",
      headers: { cookie: viewer.cookie, "x-app-csrf": viewer.csrf, "content-type": "application/json", "content-length": 100 },
      chunks: ["{\"args\":"],
      endBody: false,
    });
    expect(answer.status).toBe(408);
    expect(JSON.parse(answer.body)).toMatchObject({ code: "RPC_BODY_TIMEOUT", details: { timeoutMs: 150 } });
    expect(Date.now() - started).toBeLessThan(1000);
    expect(answer.headers.connection).toBe("close");
  });

  it("a slow body does not eat the method's timeoutMs: the method gets its whole budget", async () => {
    // slow: timeoutMs 150. The body takes ~120 ms to arrive, the method 90 ms: 210 ms in
    // all, but neither phase is over 150 ms on its own.
    const body = JSON.stringify({ args: [90] });
    const target = new URL(app.url);
    const answer = await new Promise<{ status: number; text: string }>((resolve, reject) => {
      const req = httpRequest(
        {
          host: target.hostname,
          port: target.port,
          path: "/__rpc/plugin/rt/slow",
          method: "POST",
          headers: { cookie: viewer.cookie, "x-app-csrf": viewer.csrf, "content-type": "application/json", "content-length": Buffer.byteLength(body) },
        },
        (res) => {
          let text = "";
          res.on("data", (chunk: Buffer) => (text += chunk.toString("utf8")));
          res.on("end", () => resolve({ status: res.statusCode ?? 0, text }));
        },
      );
      req.on("error", reject);
      req.write(body.slice(0, 5));
      setTimeout(() => req.end(body.slice(5)), 120);
    });
    expect([answer.status, JSON.parse(answer.text)]).toEqual([200, { result: "done" }]);
  });

  it("uses server.rpc.timeoutMs when the policy sets none", async () => {
    const answer = await call("defaultTimeout");
    expect(answer.body).toMatchObject({ code: "RPC_TIMEOUT", details: { timeoutMs: 250 } });
  });

  it("aborts ctx.signal when the client goes away", async () => {
    await new Promise<void>((resolve) => {
      const target = new URL(app.url);
      const req = httpRequest({
        host: target.hostname,
        port: target.port,
        path: "/__rpc/plugin/rt/slow",
        method: "POST",
        headers: { cookie: viewer.cookie, "x-app-csrf": viewer.csrf, "content-type": "application/json" },
      });
      req.on("error", () => resolve());
      req.end(JSON.stringify({ args: [5000, "gone"] }));
      setTimeout(() => {
        req.destroy();
        resolve();
      }, 60);
    });
    await sleep(50);
    const seen = await stats();
    expect(seen.aborts).toEqual([{ tag: "gone", reason: "ClientGoneError" }]);
    const event = app.logs.events().findLast((line) => line.method === "slow");
    expect(event).toMatchObject({ event: "rpc.error", status: 499 });
  });

  it("holds the concurrency slot until a method that ignores its signal really ends", async () => {
    // stubborn: timeoutMs 100, maxConcurrency 1, runs 300 ms whatever the signal says.
    const first = call("stubborn", [300, "first"]);
    await sleep(20);
    const second = call("stubborn", [10, "second"]);
    const [a, b] = await Promise.all([first, second]);
    expect(a.body.code).toBe("RPC_TIMEOUT");
    // The second waited for the slot, which the first held past its own timeout.
    expect(b.body).toMatchObject({ code: "RPC_TIMEOUT", details: { queued: true } });
    await sleep(350);
    const seen = await stats();
    expect(seen.maxRunning).toBe(1);
    expect(seen.finished).toEqual(["first"]);
  });
});

describe("concurrency and queueing", () => {
  it("runs up to maxConcurrency at once, queues the rest FIFO, refuses past queueLimit with 429 at once", async () => {
    // limited: maxConcurrency 2, queueLimit 3.
    const calls = Array.from({ length: 5 }, (_, i) => call("limited", [150, `c${i}`]));
    await sleep(40);
    const refusedAt = Date.now();
    const refused = await call("limited", [150, "c5"]);
    expect(Date.now() - refusedAt).toBeLessThan(100);
    expect([refused.status, refused.body.code]).toEqual([429, "RPC_QUEUE_FULL"]);
    const answers = await Promise.all(calls);
    expect(answers.map((answer) => answer.body.result)).toEqual(["c0", "c1", "c2", "c3", "c4"]);
    const seen = await stats();
    expect(seen.maxRunning).toBe(2);
    expect(seen.finished).toEqual(["c0", "c1", "c2", "c3", "c4"]);
  });

  it("a queued call never waits longer than its timeoutMs: 504 with details.queued", async () => {
    // queuedTimeout: maxConcurrency 1, timeoutMs 200; the first runs 400 ms.
    const first = call("queuedTimeout", [400, "holder"]);
    await sleep(20);
    const started = Date.now();
    const waiting = await call("queuedTimeout", [10, "waiter"]);
    expect(Date.now() - started).toBeLessThan(400);
    expect(waiting.status).toBe(504);
    expect(waiting.body).toMatchObject({ code: "RPC_TIMEOUT", details: { queued: true, timeoutMs: 200 } });
    expect((await first).body.code).toBe("RPC_TIMEOUT");
    await sleep(250);
    expect((await stats()).finished).toEqual(["holder"]);
  });

  it("a queued caller that disconnects leaves the queue without taking a slot", async () => {
    const holder = call("limited", [250, "holder1"]);
    const holder2 = call("limited", [250, "holder2"]);
    await sleep(30);
    const target = new URL(app.url);
    const req = httpRequest({
      host: target.hostname,
      port: target.port,
      path: "/__rpc/plugin/rt/limited",
      method: "POST",
      headers: { cookie: viewer.cookie, "x-app-csrf": viewer.csrf, "content-type": "application/json" },
    });
    req.on("error", () => {});
    req.end(JSON.stringify({ args: [10, "deserter"] }));
    await sleep(40);
    req.destroy();
    await sleep(20);
    const after = call("limited", [10, "after"]);
    const answers = await Promise.all([holder, holder2, after]);
    expect(answers.map((answer) => answer.body.result)).toEqual(["holder1", "holder2", "after"]);
    expect((await stats()).finished).not.toContain("deserter");
  });

  it("methods sharing a concurrencyKey share one limit", async () => {
    const a = call("sharedA", [200]);
    await sleep(30);
    const b = await call("sharedB");
    expect([b.status, b.body.code]).toEqual([429, "RPC_QUEUE_FULL"]);
    expect((await a).body.result).toBe("A");
    expect((await call("sharedB")).body.result).toBe("B");
  });
});

describe("circuit breaker", () => {
  it("opens at failureThreshold, rejects at once with 503 and Retry-After, lets one trial through, closes on success", async () => {
    expect((await call("flaky", ["fail"])).status).toBe(500);
    expect((await call("flaky", ["fail"])).status).toBe(500);
    const open = await call("flaky", ["ok"]);
    expect([open.status, open.body.code]).toEqual([503, "RPC_CIRCUIT_OPEN"]);
    expect(open.headers.get("retry-after")).toBe("1");
    // Shared key: the other method is refused as well, without running.
    const shared = await call("flakyToo", ["ok"]);
    expect(shared.body.code).toBe("RPC_CIRCUIT_OPEN");
    expect((await stats()).finished).toEqual(["flaky:fail", "flaky:fail"]);

    await sleep(420);
    // One trial at a time: while it runs, others are still refused.
    const trial = call("flaky", ["wait"]);
    await sleep(20);
    const duringTrial = await call("flakyToo", ["ok"]);
    expect(duringTrial.body.code).toBe("RPC_CIRCUIT_OPEN");
    expect((await trial).body.result).toBe("wait");
    // Closed again, count cleared: one failure does not reopen it.
    expect((await call("flakyToo", ["fail"])).status).toBe(500);
    expect((await call("flaky", ["ok"])).body.result).toBe("ok");
    const events = app.logs.events().filter((line) => line.event === "rpc.circuit_open");
    expect(events.length).toBeGreaterThanOrEqual(3);
    expect(events[0]).toMatchObject({ status: 503, code: "RPC_CIRCUIT_OPEN" });
  });

  it("a failed trial reopens the breaker for a fresh resetAfterMs; timeouts count as failures, 4xx do not", async () => {
    await sleep(450);
    // 4xx RpcErrors are not failures.
    for (let i = 0; i < 3; i++) expect((await call("flaky", ["client"])).status).toBe(400);
    expect((await call("flaky", ["ok"])).status).toBe(200);
    // Two timeouts open it.
    expect((await call("flaky", ["slow"])).body.code).toBe("RPC_TIMEOUT");
    expect((await call("flaky", ["slow"])).body.code).toBe("RPC_TIMEOUT");
    expect((await call("flaky", ["ok"])).body.code).toBe("RPC_CIRCUIT_OPEN");
    await sleep(420);
    expect((await call("flaky", ["fail"])).status).toBe(500); // the trial fails
    const reopened = await call("flaky", ["ok"]);
    expect(reopened.body.code).toBe("RPC_CIRCUIT_OPEN");
    expect(reopened.body.details.retryAfterMs).toBeGreaterThan(300);
    await sleep(420);
    expect((await call("flaky", ["ok"])).body.result).toBe("ok");
  });
});
