/**
 * Time and retries in Chromium (CONTRACT section 9): which answers are retried for which
 * methods, the backoff schedule (through HttpClient.timing), Retry-After, per-attempt
 * timeouts and a caller's abort.
 */
import { expect, it } from "vitest";
import { describeInBrowser, useBrowserFixture, type PageWindow } from "./browser.js";

describeInBrowser("HttpClient retries and timeouts", () => {
  const fx = useBrowserFixture();

  it("retries a 503 after Retry-After: 1 and resolves with the 200", async () => {
    fx.server.script("/flaky", [{ status: 503, headers: { "Retry-After": "1" }, body: { error: "busy" } }, { body: { ok: true } }]);
    const result = await fx.page.evaluate(async () => {
      const w = globalThis as unknown as PageWindow;
      const started = w.now();
      const value = await new w.HttpClient().get("/flaky");
      return { value, elapsed: w.now() - started };
    });
    expect(result.value).toEqual({ ok: true });
    const hits = fx.server.hits("/flaky");
    expect(hits).toHaveLength(2);
    expect(hits[1]!.time - hits[0]!.time).toBeGreaterThanOrEqual(950);
    expect(result.elapsed).toBeLessThan(3000);
  });

  it("retries a GET after a 500 and resolves with the 200", async () => {
    fx.server.script("/get-500", [{ status: 500, headers: { "Retry-After": "0" } }, { body: { second: true } }]);
    const value = await fx.page.evaluate(async () => {
      const w = globalThis as unknown as PageWindow;
      return new w.HttpClient().get("/get-500");
    });
    expect(value).toEqual({ second: true });
    expect(fx.server.hits("/get-500")).toHaveLength(2);
  });

  it("does not retry a POST or PATCH on 500, 502 or 504 (the server may have run it)", async () => {
    fx.server.script("/post-500", [{ status: 500, body: { error: "boom", code: "RPC_INTERNAL_ERROR" } }, { body: { never: true } }]);
    fx.server.script("/patch-502", [{ status: 502 }, { body: { never: true } }]);
    fx.server.script("/post-504", [{ status: 504 }, { body: { never: true } }]);
    const results = await fx.page.evaluate(async () => {
      const w = globalThis as unknown as PageWindow;
      w.HttpClient.timing.sleep = () => Promise.resolve();
      const c = new w.HttpClient();
      return [await w.settle(c.post("/post-500", { a: 1 })), await w.settle(c.patch("/patch-502", {})), await w.settle(c.post("/post-504", {}))];
    });
    expect(results.map((r) => (r.ok ? "ok" : r.status))).toEqual([500, 502, 504]);
    expect(results[0]).toMatchObject({ code: "RPC_INTERNAL_ERROR", message: "boom" });
    expect(fx.server.hits("/post-500")).toHaveLength(1);
    expect(fx.server.hits("/patch-502")).toHaveLength(1);
    expect(fx.server.hits("/post-504")).toHaveLength(1);
  });

  it("retries a POST and a PATCH on 429 and 503 (the server did not run it)", async () => {
    fx.server.script("/post-503", [{ status: 503, headers: { "Retry-After": "0" } }, { body: { done: 1 } }]);
    fx.server.script("/post-429", [{ status: 429, headers: { "Retry-After": "0" } }, { body: { done: 2 } }]);
    fx.server.script("/patch-429", [{ status: 429, headers: { "Retry-After": "0" } }, { body: { done: 3 } }]);
    const values = await fx.page.evaluate(async () => {
      const w = globalThis as unknown as PageWindow;
      const c = new w.HttpClient();
      return [await c.post("/post-503", { a: 1 }), await c.post("/post-429", { a: 1 }), await c.patch("/patch-429", { a: 1 })];
    });
    expect(values).toEqual([{ done: 1 }, { done: 2 }, { done: 3 }]);
    expect(fx.server.hits("/post-503")).toHaveLength(2);
    expect(fx.server.hits("/post-429")).toHaveLength(2);
    expect(fx.server.hits("/post-503")[1]!.body).toBe('{"a":1}');
  });

  it("stops after maxRetries and rejects with the last answer; 0 disables retries", async () => {
    fx.server.script("/always-500", [{ status: 500, body: { error: "down", code: "X_DOWN" } }]);
    fx.server.script("/once-503", [{ status: 503 }]);
    fx.server.script("/not-found", [{ status: 404 }]);
    const results = await fx.page.evaluate(async () => {
      const w = globalThis as unknown as PageWindow;
      w.HttpClient.timing.sleep = () => Promise.resolve();
      return [
        await w.settle(new w.HttpClient({ maxRetries: 2 }).get("/always-500")),
        await w.settle(new w.HttpClient({ maxRetries: 0 }).get("/once-503")),
        await w.settle(new w.HttpClient().get("/not-found")),
        await w.settle(new w.HttpClient({ maxRetries: 5 }).put("/always-500", {}, { maxRetries: 1 })),
      ];
    });
    expect(results[0]).toMatchObject({ ok: false, status: 500, code: "X_DOWN" });
    expect(results[1]).toMatchObject({ ok: false, status: 503 });
    expect(results[2]).toMatchObject({ ok: false, status: 404 });
    expect(results[3]).toMatchObject({ ok: false, status: 500 });
    expect(fx.server.hits("/always-500")).toHaveLength(3 + 2);
    expect(fx.server.hits("/once-503")).toHaveLength(1);
    expect(fx.server.hits("/not-found")).toHaveLength(1);
  });

  it("backs off exponentially with full jitter: base 300 ms, factor 2, cap 10 s", async () => {
    fx.server.script("/backoff", [{ status: 502 }]);
    const waits = await fx.page.evaluate(async () => {
      const w = globalThis as unknown as PageWindow;
      const waits: Record<string, number[]> = {};
      const record = (key: string) => (ms: number) => {
        (waits[key] ??= []).push(ms);
        return Promise.resolve();
      };
      w.HttpClient.timing.random = () => 0.999999;
      w.HttpClient.timing.sleep = record("max");
      await w.settle(new w.HttpClient({ maxRetries: 8 }).get("/backoff"));
      w.HttpClient.timing.random = () => 0.5;
      w.HttpClient.timing.sleep = record("half");
      await w.settle(new w.HttpClient({ maxRetries: 3 }).get("/backoff"));
      w.HttpClient.timing.random = () => 0;
      w.HttpClient.timing.sleep = record("zero");
      await w.settle(new w.HttpClient({ maxRetries: 2 }).get("/backoff"));
      return waits;
    });
    expect(waits.max).toEqual([300, 600, 1200, 2400, 4800, 9600, 10000, 10000]);
    expect(waits.half).toEqual([150, 300, 600]);
    expect(waits.zero).toEqual([0, 0]);
  });

  it("waits with real random jitter inside the bound", async () => {
    fx.server.script("/jitter", [{ status: 500 }, { status: 500 }, { body: { ok: 1 } }]);
    const elapsed = await fx.page.evaluate(async () => {
      const w = globalThis as unknown as PageWindow;
      const started = w.now();
      await new w.HttpClient().get("/jitter");
      return w.now() - started;
    });
    expect(fx.server.hits("/jitter")).toHaveLength(3);
    // At most 300 + 600 ms of backoff plus request time.
    expect(elapsed).toBeLessThan(1500);
  });

  it("honours Retry-After as seconds or an HTTP-date, capped at 60 s, 0 meaning at once", async () => {
    const inTwoSeconds = new Date(Date.now() + 2500).toUTCString();
    fx.server.script("/ra-seconds", [{ status: 429, headers: { "Retry-After": "7" } }, { body: {} }]);
    fx.server.script("/ra-date", [{ status: 503, headers: { "Retry-After": inTwoSeconds } }, { body: {} }]);
    fx.server.script("/ra-past", [{ status: 503, headers: { "Retry-After": "Thu, 01 Jan 2015 00:00:00 GMT" } }, { body: {} }]);
    fx.server.script("/ra-long", [{ status: 503, headers: { "Retry-After": "3600" } }, { body: {} }]);
    fx.server.script("/ra-far-date", [{ status: 503, headers: { "Retry-After": new Date(Date.now() + 3_600_000).toUTCString() } }, { body: {} }]);
    fx.server.script("/ra-zero", [{ status: 429, headers: { "Retry-After": "0" } }, { body: {} }]);
    fx.server.script("/ra-junk", [{ status: 429, headers: { "Retry-After": "soon" } }, { body: {} }]);
    const waits = await fx.page.evaluate(async () => {
      const w = globalThis as unknown as PageWindow;
      const waits: number[] = [];
      w.HttpClient.timing.random = () => 0.999999;
      w.HttpClient.timing.sleep = (ms: number) => {
        waits.push(ms);
        return Promise.resolve();
      };
      const c = new w.HttpClient();
      for (const path of ["/ra-seconds", "/ra-date", "/ra-past", "/ra-long", "/ra-far-date", "/ra-zero", "/ra-junk"]) await c.get(path);
      return waits;
    });
    expect(waits[0]).toBe(7000);
    // HTTP-dates have one-second resolution.
    expect(waits[1]).toBeGreaterThan(1000);
    expect(waits[1]).toBeLessThanOrEqual(2500);
    expect(waits.slice(2)).toEqual([0, 60000, 60000, 0, 300]);
  });

  it("retries network errors for GET, PUT and DELETE but never for POST or PATCH", async () => {
    for (const path of ["/drop-get", "/drop-put", "/drop-delete", "/drop-post", "/drop-patch"]) fx.server.script(path, [{ destroy: true }]);
    const { results, calls } = await fx.page.evaluate(async () => {
      const w = globalThis as unknown as PageWindow;
      // Counted in the page: Chromium itself may resend a request whose reused
      // connection was dropped, so the server's count says nothing about the client's.
      const calls: Record<string, number> = {};
      const original = w.fetch;
      w.fetch = (input, init) => {
        calls[String(input)] = (calls[String(input)] ?? 0) + 1;
        return original(input, init);
      };
      w.HttpClient.timing.sleep = () => Promise.resolve();
      const c = new w.HttpClient({ maxRetries: 2 });
      const results = [
        await w.settle(c.get("/drop-get")),
        await w.settle(c.put("/drop-put", { a: 1 })),
        await w.settle(c.delete("/drop-delete")),
        await w.settle(c.post("/drop-post", { a: 1 })),
        await w.settle(c.patch("/drop-patch", { a: 1 })),
      ];
      return { results, calls };
    });
    for (const result of results) expect(result).toMatchObject({ ok: false, name: "TypeError" });
    expect(calls).toEqual({ "/drop-get": 3, "/drop-put": 3, "/drop-delete": 3, "/drop-post": 1, "/drop-patch": 1 });
  });

  it("recovers from a network error on a GET", async () => {
    fx.server.script("/drop-once", [{ destroy: true }, { body: { back: true } }]);
    const value = await fx.page.evaluate(async () => {
      const w = globalThis as unknown as PageWindow;
      return new w.HttpClient().get("/drop-once");
    });
    expect(value).toEqual({ back: true });
    expect(fx.server.hits("/drop-once")).toHaveLength(2);
  });

  it("times out an attempt after timeoutMs with a TimeoutError, and does not retry it", async () => {
    fx.server.script("/slow", [{ delayMs: 1500, body: { late: true } }]);
    const result = await fx.page.evaluate(async () => {
      const w = globalThis as unknown as PageWindow;
      const started = w.now();
      const settled = await w.settle(new w.HttpClient({ timeoutMs: 150 }).get("/slow"));
      return { settled, elapsed: w.now() - started };
    });
    expect(result.settled).toMatchObject({ ok: false, name: "TimeoutError", code: "CLIENT_TIMEOUT" });
    expect(result.elapsed).toBeGreaterThanOrEqual(140);
    expect(result.elapsed).toBeLessThan(1000);
    expect(fx.server.hits("/slow")).toHaveLength(1);
  });

  it("counts the body in the timeout and lets a request option override it", async () => {
    fx.server.script("/stall", [{ stallBodyMs: 1500, body: { late: true } }]);
    fx.server.script("/slowish", [{ delayMs: 300, body: { fine: true } }]);
    const result = await fx.page.evaluate(async () => {
      const w = globalThis as unknown as PageWindow;
      const c = new w.HttpClient({ timeoutMs: 100 });
      const started = w.now();
      const stalled = await w.settle(c.get("/stall"));
      const elapsed = w.now() - started;
      const overridden = await w.settle(c.get("/slowish", { timeoutMs: 2000 }));
      return { stalled, elapsed, overridden };
    });
    expect(result.stalled).toMatchObject({ ok: false, name: "TimeoutError" });
    expect(result.elapsed).toBeLessThan(1000);
    expect(result.overridden).toEqual({ ok: true, value: { fine: true } });
  });

  it("combines the timeout with the caller's signal: the caller's abort rejects at once with AbortError", async () => {
    fx.server.script("/slow-abort", [{ delayMs: 2000, body: {} }]);
    const result = await fx.page.evaluate(async () => {
      const w = globalThis as unknown as PageWindow;
      const controller = new AbortController();
      setTimeout(() => controller.abort(), 100);
      const started = w.now();
      const settled = await w.settle(new w.HttpClient({ timeoutMs: 5000 }).get("/slow-abort", { signal: controller.signal }));
      return { settled, elapsed: w.now() - started };
    });
    expect(result.settled).toMatchObject({ ok: false, name: "AbortError" });
    expect(result.elapsed).toBeLessThan(1000);
    expect(fx.server.hits("/slow-abort")).toHaveLength(1);
  });

  it("rejects at once when the caller aborts during a backoff wait, without another attempt", async () => {
    fx.server.script("/wait-abort", [{ status: 503, headers: { "Retry-After": "5" } }, { body: {} }]);
    const result = await fx.page.evaluate(async () => {
      const w = globalThis as unknown as PageWindow;
      const controller = new AbortController();
      const started = w.now();
      const pending = w.settle(new w.HttpClient().get("/wait-abort", { signal: controller.signal }));
      setTimeout(() => controller.abort(), 300);
      const settled = await pending;
      return { settled, elapsed: w.now() - started };
    });
    expect(result.settled).toMatchObject({ ok: false, name: "AbortError" });
    expect(result.elapsed).toBeLessThan(1500);
    expect(fx.server.hits("/wait-abort")).toHaveLength(1);
  });

  it("sends nothing when the signal is already aborted, and keeps a custom abort reason", async () => {
    fx.server.script("/slow-reason", [{ delayMs: 1000, body: {} }]);
    const result = await fx.page.evaluate(async () => {
      const w = globalThis as unknown as PageWindow;
      const controller = new AbortController();
      controller.abort();
      const already = await w.settle(new w.HttpClient().get("/echo/never", { signal: controller.signal }));
      const custom = new AbortController();
      const reason = new Error("user left");
      reason.name = "UserLeft";
      setTimeout(() => custom.abort(reason), 50);
      const withReason = await w.settle(new w.HttpClient().get("/slow-reason", { signal: custom.signal }));
      return { already, withReason };
    });
    expect(result.already).toMatchObject({ ok: false, name: "AbortError" });
    expect(fx.server.hits("/echo/never")).toHaveLength(0);
    expect(result.withReason).toMatchObject({ ok: false, name: "UserLeft", message: "user left" });
  });
});
