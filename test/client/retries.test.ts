/**
 * Time and retries in Chromium (docs/guides/browser.md "Retries and timeouts"): which answers are retried for which
 * methods, the backoff schedule (through HttpClient.timing), Retry-After, per-attempt
 * timeouts and a caller's abort.
 */
import { expect, it } from "vitest";
import { describeInBrowser, useBrowserFixture, type PageWindow } from "../helpers/browser.js";

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

  it("does not retry a POST on 503 SESSION_STORE_UNAVAILABLE (the method may have run), but does a GET", async () => {
    const body = { error: "The session store cannot be reached", code: "SESSION_STORE_UNAVAILABLE", details: {} };
    fx.server.script("/post-store", [{ status: 503, headers: { "Retry-After": "0" }, body }, { body: { never: true } }]);
    fx.server.script("/get-store", [{ status: 503, headers: { "Retry-After": "0" }, body }, { body: { again: true } }]);
    const results = await fx.page.evaluate(async () => {
      const w = globalThis as unknown as PageWindow;
      const c = new w.HttpClient();
      return [await w.settle(c.post("/post-store", { a: 1 })), await w.settle(c.get("/get-store"))];
    });
    expect(results[0]).toMatchObject({ ok: false, status: 503, code: "SESSION_STORE_UNAVAILABLE" });
    expect(results[1]).toMatchObject({ ok: true, value: { again: true } });
    expect(fx.server.hits("/post-store")).toHaveLength(1);
    expect(fx.server.hits("/get-store")).toHaveLength(2);
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

  it("answers 408 and 413 at once, Retry-After or not: only 429 and 5xx are retried", async () => {
    // Chromium itself resends a request once after a 408, so the server always says 408
    // and the client's own attempts are counted in the page.
    fx.server.script("/r408", [{ status: 408 }]);
    fx.server.script("/r413-wait", [{ status: 413, headers: { "Retry-After": "1" } }, { body: { never: true } }]);
    fx.server.script("/r413", [{ status: 413 }, { body: { never: true } }]);
    const { results, calls } = await fx.page.evaluate(async () => {
      const w = globalThis as unknown as PageWindow;
      const calls: Record<string, number> = {};
      const original = w.fetch;
      w.fetch = (input, init) => {
        calls[String(input)] = (calls[String(input)] ?? 0) + 1;
        return original(input, init);
      };
      w.HttpClient.timing.sleep = () => Promise.resolve();
      const c = new w.HttpClient();
      const results = [await w.settle(c.get("/r408")), await w.settle(c.get("/r413-wait")), await w.settle(c.put("/r413", { big: true }))];
      return { results, calls };
    });
    expect(results.map((r) => (r.ok ? "ok" : r.status))).toEqual([408, 413, 413]);
    expect(calls).toEqual({ "/r408": 1, "/r413-wait": 1, "/r413": 1 });
    expect(fx.server.hits("/r413-wait")).toHaveLength(1);
    expect(fx.server.hits("/r413")).toHaveLength(1);
  });

  it("retries every 5xx for GET and DELETE, 501 and 505 included, but not for POST", async () => {
    for (const status of [501, 505]) {
      fx.server.script(`/get-${status}`, [{ status }, { body: { status } }]);
      fx.server.script(`/delete-${status}`, [{ status }, { body: { status } }]);
      fx.server.script(`/post-${status}`, [{ status }, { body: { never: true } }]);
    }
    const results = await fx.page.evaluate(async () => {
      const w = globalThis as unknown as PageWindow;
      w.HttpClient.timing.sleep = () => Promise.resolve();
      const c = new w.HttpClient();
      const results: unknown[] = [];
      for (const status of [501, 505]) {
        results.push(await w.settle(c.get(`/get-${status}`)), await w.settle(c.delete(`/delete-${status}`)));
        results.push(await w.settle(c.post(`/post-${status}`, { a: 1 })));
      }
      return results;
    });
    expect(results).toMatchObject([
      { ok: true, value: { status: 501 } },
      { ok: true, value: { status: 501 } },
      { ok: false, status: 501 },
      { ok: true, value: { status: 505 } },
      { ok: true, value: { status: 505 } },
      { ok: false, status: 505 },
    ]);
    for (const status of [501, 505]) {
      expect(fx.server.hits(`/get-${status}`)).toHaveLength(2);
      expect(fx.server.hits(`/delete-${status}`)).toHaveLength(2);
      expect(fx.server.hits(`/post-${status}`)).toHaveLength(1);
    }
  });

  it("honours Retry-After on every retried answer, 500, 502 and 504 included, over the backoff", async () => {
    fx.server.script("/ra-500", [{ status: 500, headers: { "Retry-After": "2" } }, { body: { n: 500 } }]);
    fx.server.script("/ra-502", [{ status: 502, headers: { "Retry-After": "3" } }, { body: { n: 502 } }]);
    fx.server.script("/ra-504", [{ status: 504, headers: { "Retry-After": "4" } }, { body: { n: 504 } }]);
    const result = await fx.page.evaluate(async () => {
      const w = globalThis as unknown as PageWindow;
      const waits: number[] = [];
      // With this jitter source the backoff would be 0: any wait comes from Retry-After.
      w.HttpClient.timing.random = () => 0;
      w.HttpClient.timing.sleep = (ms: number) => {
        waits.push(ms);
        return Promise.resolve();
      };
      const c = new w.HttpClient();
      const values = [await c.get("/ra-500"), await c.put("/ra-502", {}), await c.delete("/ra-504")];
      return { values, waits };
    });
    expect(result.values).toEqual([{ n: 500 }, { n: 502 }, { n: 504 }]);
    expect(result.waits).toEqual([2000, 3000, 4000]);
  });

  it("honours a real Retry-After wait on a 500", async () => {
    fx.server.script("/ra-500-real", [{ status: 500, headers: { "Retry-After": "1" } }, { body: { ok: true } }]);
    const value = await fx.page.evaluate(async () => {
      const w = globalThis as unknown as PageWindow;
      w.HttpClient.timing.random = () => 0;
      return new w.HttpClient().get("/ra-500-real");
    });
    expect(value).toEqual({ ok: true });
    const hits = fx.server.hits("/ra-500-real");
    expect(hits).toHaveLength(2);
    expect(hits[1]!.time - hits[0]!.time).toBeGreaterThanOrEqual(950);
  });

  it("never retries a request with a stream body", async () => {
    fx.server.script("/stream-put", [{ status: 503 }, { body: {} }]);
    const result = await fx.page.evaluate(async () => {
      const w = globalThis as unknown as PageWindow;
      w.HttpClient.timing.sleep = () => Promise.resolve();
      const stream = (): unknown =>
        new ReadableStream({
          start(controller: { enqueue(chunk: Uint8Array): void; close(): void }) {
            controller.enqueue(new TextEncoder().encode("chunk"));
            controller.close();
          },
        });
      const calls: Record<string, number> = {};
      const original = w.fetch;
      // Chromium sends a stream body only over HTTP/2, so against this HTTP/1.1 server
      // it fails as a network error. A stand-in answers the busy and expired answers an
      // HTTP/2 server would give.
      w.fetch = (input, init) => {
        const url = String(input);
        calls[url] = (calls[url] ?? 0) + 1;
        if (url === "/busy") return Promise.resolve(new Response("busy", { status: 503, headers: { "Retry-After": "0" } }));
        if (url === "/expired") return Promise.resolve(new Response("", { status: 401 }));
        return original(input, init);
      };
      w.AppUser.setSecret("stale", "jwt", "s");
      w.AppUser.addHandler("requestSecretUpdate", () => w.AppUser.setSecret("fresh", "jwt", "s"));
      const c = new w.HttpClient({ auth: { contextId: "s", types: ["jwt"] } });
      const results = [
        // PUT is idempotent: with any other body this network error would be retried.
        await w.settle(c.put("/stream-put", stream())),
        await w.settle(c.post("/busy", stream())),
        await w.settle(c.put("/busy", stream(), { maxRetries: 5 })),
        await w.settle(c.put("/expired", stream())),
      ];
      return { results, calls };
    });
    expect(result.results).toMatchObject([
      { ok: false, name: "TypeError" },
      { ok: false, status: 503 },
      { ok: false, status: 503 },
      { ok: false, status: 401 },
    ]);
    expect(result.calls).toEqual({ "/stream-put": 1, "/busy": 2, "/expired": 1 });
  });

  it("rejects at once when the caller aborts during a jittered backoff wait", async () => {
    fx.server.script("/backoff-abort", [{ status: 502 }, { body: {} }]);
    const result = await fx.page.evaluate(async () => {
      const w = globalThis as unknown as PageWindow;
      const controller = new AbortController();
      const waits: number[] = [];
      let abortedAt = 0;
      const realSleep = w.HttpClient.timing.sleep;
      // The real wait, with the abort arriving 50 ms into it.
      w.HttpClient.timing.random = () => 0.999999;
      w.HttpClient.timing.sleep = (ms: number, signal: unknown) => {
        waits.push(ms);
        setTimeout(() => {
          abortedAt = w.now();
          controller.abort();
        }, 50);
        return realSleep(ms, signal);
      };
      const settled = await w.settle(new w.HttpClient({ maxRetries: 3 }).get("/backoff-abort", { signal: controller.signal }));
      return { settled, waits, lag: w.now() - abortedAt };
    });
    expect(result.settled).toMatchObject({ ok: false, name: "AbortError" });
    // The first backoff step, 300 ms: the abort cut it short.
    expect(result.waits).toEqual([300]);
    expect(result.lag).toBeLessThan(200);
    expect(fx.server.hits("/backoff-abort")).toHaveLength(1);
  });
});
