/**
 * Auth in Chromium (docs/guides/browser.md "Auth handlers", "The 401 refresh flow"):
 * handlers in order, the global registry, warnings, and the 401
 * refresh through AppUser's `requestSecretUpdate` / `secret-updated`.
 */
import { expect, it } from "vitest";
import { describeInBrowser, useBrowserFixture, type PageWindow } from "../helpers/browser.js";
import type { RecordedRequest, ScriptedResponse } from "../helpers/fixture-server.js";

interface Echo {
  url: string;
  headers: Record<string, string>;
}

/** 401 unless the request carries `Bearer <token>`. */
const requireBearer =
  (token: string) =>
  (request: RecordedRequest): ScriptedResponse =>
    request.headers.authorization === `Bearer ${token}`
      ? { body: { welcome: token } }
      : { status: 401, body: { error: "token expired", code: "PROXY_AUTH_FAILED", details: {} } };

describeInBrowser("HttpClient auth", () => {
  const fx = useBrowserFixture();

  it("turns a stored jwt secret into Authorization: Bearer with the built-in handler", async () => {
    const echo = (await fx.page.evaluate(async () => {
      const w = globalThis as unknown as PageWindow;
      w.AppUser.setSecret("token-1", "jwt", "viewer");
      return new w.HttpClient({ proxy: "api", auth: { contextId: "viewer", types: ["jwt"], required: true } }).get("/me");
    })) as Echo;
    expect(echo.url).toBe("/proxy/api/me");
    expect(echo.headers.authorization).toBe("Bearer token-1");
    expect(fx.warnings()).toEqual([]);
  });

  it("looks secrets up by type and context: another context's secret is not used", async () => {
    const echo = (await fx.page.evaluate(async () => {
      const w = globalThis as unknown as PageWindow;
      w.AppUser.setSecret("other-context", "jwt", "admin");
      return new w.HttpClient({ auth: { contextId: "viewer", types: ["jwt"] } }).get("/echo/ctx");
    })) as Echo;
    expect(echo.headers.authorization).toBeUndefined();
  });

  it("applies types in order, client handlers before global ones, and passes { secret, type, contextId, url, method }", async () => {
    const result = await fx.page.evaluate(async () => {
      const w = globalThis as unknown as PageWindow;
      const inputs: unknown[] = [];
      w.HttpClient.addAuthHandler("apikey", async (input: { secret: string }) => {
        inputs.push(input);
        return { "X-Api-Key": input.secret, "X-Order": "apikey" };
      });
      w.AppUser.setSecret("key-1", "apikey", "ctx");
      w.AppUser.setSecret("jwt-1", "jwt", "ctx");
      const c = new w.HttpClient({
        baseURL: "/echo",
        auth: {
          contextId: "ctx",
          types: ["apikey", "jwt"],
          handlers: {
            jwt: (input: { secret: string }) => {
              inputs.push(input);
              return new Headers({ Authorization: `Custom ${input.secret}`, "X-Order": "jwt" });
            },
          },
        },
      });
      const echo = await c.post("/data", { a: 1 }, { query: { q: 1 } });
      const plain = await new w.HttpClient({ auth: { contextId: "ctx", types: ["jwt"] } }).get("/echo/global-jwt");
      return { echo, plain, inputs };
    });
    expect(result.echo.headers["x-api-key"]).toBe("key-1");
    expect(result.echo.headers.authorization).toBe("Custom jwt-1");
    // Later types overwrite earlier ones for the same header: order is observable.
    expect(result.echo.headers["x-order"]).toBe("jwt");
    expect(result.inputs).toEqual([
      { secret: "key-1", type: "apikey", contextId: "ctx", url: "/echo/data?q=1", method: "POST" },
      { secret: "jwt-1", type: "jwt", contextId: "ctx", url: "/echo/data?q=1", method: "POST" },
    ]);
    // The per-client override did not replace the global jwt handler.
    expect(result.plain.headers.authorization).toBe("Bearer jwt-1");
  });

  it("removeAuthHandler removes a global handler; a secret without a handler adds nothing and warns once", async () => {
    const result = await fx.page.evaluate(async () => {
      const w = globalThis as unknown as PageWindow;
      w.HttpClient.addAuthHandler("custom", () => ({ "X-Custom": "1" }));
      w.AppUser.setSecret("s", "custom");
      const c = new w.HttpClient({ auth: { types: ["custom"] } });
      const before = await c.get("/echo/h1");
      const removed = w.HttpClient.removeAuthHandler("custom");
      const removedAgain = w.HttpClient.removeAuthHandler("custom");
      const after1 = await c.get("/echo/h2");
      const after2 = await c.get("/echo/h3");
      return { before: before.headers["x-custom"], removed, removedAgain, after1: after1.headers["x-custom"] ?? null, after2: after2.headers["x-custom"] ?? null };
    });
    expect(result).toEqual({ before: "1", removed: true, removedAgain: false, after1: null, after2: null });
    const warnings = fx.warnings();
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain('"custom"');
  });

  it("keeps handler names like __proto__ and toString plain names", async () => {
    const result = await fx.page.evaluate(async () => {
      const w = globalThis as unknown as PageWindow;
      w.HttpClient.addAuthHandler("__proto__", () => ({ "X-Proto": "yes" }));
      w.AppUser.setSecret("p", "__proto__");
      w.AppUser.setSecret("t", "toString");
      w.AppUser.setSecret("c", "constructor");
      const proto = await new w.HttpClient({ auth: { types: ["__proto__"] } }).get("/echo/proto");
      // No handler is registered for these: the inherited Object members must not be called.
      const inherited = await new w.HttpClient({ auth: { types: ["toString", "constructor"], handlers: {} } }).get("/echo/inherited");
      return { proto: proto.headers["x-proto"], inherited: Object.keys(inherited.headers).filter((h) => h.startsWith("x-") && h !== "x-app-csrf"), polluted: ({} as Record<string, unknown>).constructor === Object };
    });
    expect(result).toEqual({ proto: "yes", inherited: [], polluted: true });
    expect(fx.warnings()).toHaveLength(2);
  });

  it("uses a custom secretStore instead of AppUser", async () => {
    const echo = (await fx.page.evaluate(async () => {
      const w = globalThis as unknown as PageWindow;
      w.AppUser.setSecret("from-app-user", "jwt");
      const store = { getSecret: (type: string, contextId?: string) => `${type}:${contextId}`, setSecret() {} };
      return new w.HttpClient({ secretStore: store, auth: { types: ["jwt"], contextId: "x" } }).get("/echo/store");
    })) as Echo;
    expect(echo.headers.authorization).toBe("Bearer jwt:x");
  });

  it("warns with the documented text when auth.required is set in proxy mode and no secret is found", async () => {
    await fx.page.evaluate(async () => {
      const w = globalThis as unknown as PageWindow;
      await new w.HttpClient({ proxy: "p", auth: { contextId: "none", types: ["jwt"], required: true } }).get("/a");
      // Not required, or not in proxy mode: no warning.
      await new w.HttpClient({ proxy: "p", auth: { contextId: "none", types: ["jwt"] } }).get("/b");
      await new w.HttpClient({ auth: { contextId: "none", types: ["jwt"], required: true } }).get("/echo/c");
    });
    expect(fx.warnings()).toEqual(["auth.required=true for proxy request but no secrets found"]);
    expect(fx.server.hits("/proxy/p/a")).toHaveLength(1);
  });

  it("on a 401 raises requestSecretUpdate, waits for setSecret and replays once with the new secret", async () => {
    fx.server.script("/proxy/api/profile", requireBearer("fresh"));
    const result = await fx.page.evaluate(async () => {
      const w = globalThis as unknown as PageWindow;
      const events: unknown[] = [];
      w.AppUser.setSecret("stale", "jwt", "viewer");
      // A login client: refreshes the token a little later, as a real one would.
      w.AppUser.addHandler("requestSecretUpdate", (payload: { type: string; contextId: string }) => {
        events.push(payload);
        setTimeout(() => w.AppUser.setSecret("fresh", payload.type, payload.contextId), 100);
      });
      const c = new w.HttpClient({ proxy: "api", auth: { contextId: "viewer", types: ["jwt"], required: true } });
      return { value: await c.get("/profile"), events };
    });
    expect(result.value).toEqual({ welcome: "fresh" });
    expect(result.events).toEqual([{ type: "jwt", contextId: "viewer" }]);
    const hits = fx.server.hits("/proxy/api/profile");
    expect(hits.map((h) => h.headers.authorization)).toEqual(["Bearer stale", "Bearer fresh"]);
  });

  it("rejects the 401 when no new secret arrives in time (auth.refreshTimeoutMs)", async () => {
    fx.server.script("/proxy/api/locked", requireBearer("never"));
    const result = await fx.page.evaluate(async () => {
      const w = globalThis as unknown as PageWindow;
      let events = 0;
      w.AppUser.setSecret("stale", "jwt", "viewer");
      w.AppUser.addHandler("requestSecretUpdate", () => (events += 1));
      // A secret for another context does not count.
      setTimeout(() => w.AppUser.setSecret("fresh", "jwt", "other"), 50);
      const c = new w.HttpClient({ proxy: "api", auth: { contextId: "viewer", types: ["jwt"], refreshTimeoutMs: 300 } });
      const started = w.now();
      const settled = await w.settle(c.get("/locked"));
      return { settled, events, elapsed: w.now() - started };
    });
    expect(result.settled).toMatchObject({ ok: false, name: "HttpError", status: 401, code: "PROXY_AUTH_FAILED" });
    expect(result.events).toBe(1);
    expect(result.elapsed).toBeGreaterThanOrEqual(280);
    expect(result.elapsed).toBeLessThan(2000);
    expect(fx.server.hits("/proxy/api/locked")).toHaveLength(1);
  });

  it("rejects a 401 at once when nobody listens for requestSecretUpdate, and waits once someone does", async () => {
    fx.server.script("/proxy/api/unheard", requireBearer("fresh"));
    const result = await fx.page.evaluate(async () => {
      const w = globalThis as unknown as PageWindow;
      w.AppUser.setSecret("stale", "jwt", "quiet");
      // The default refreshTimeoutMs (20 s): no new secret can come, so none is awaited.
      const c = new w.HttpClient({ proxy: "api", auth: { contextId: "quiet", types: ["jwt"] } });
      let started = w.now();
      const unheard = await w.settle(c.get("/unheard"));
      const unheardMs = w.now() - started;
      // A listener that has been removed does not count either.
      const gone = (): void => {};
      w.AppUser.addHandler("requestSecretUpdate", gone);
      w.AppUser.removeHandler("requestSecretUpdate", gone);
      started = w.now();
      const removed = await w.settle(c.get("/unheard"));
      const removedMs = w.now() - started;
      w.AppUser.addHandler("requestSecretUpdate", ({ type, contextId }: { type: string; contextId: string }) =>
        setTimeout(() => w.AppUser.setSecret("fresh", type, contextId), 100),
      );
      const heard = await w.settle(c.get("/unheard"));
      return { unheard, unheardMs, removed, removedMs, heard };
    });
    expect(result.unheard).toMatchObject({ ok: false, name: "HttpError", status: 401, code: "PROXY_AUTH_FAILED" });
    expect(result.unheardMs).toBeLessThan(2000);
    expect(result.removed).toMatchObject({ ok: false, status: 401 });
    expect(result.removedMs).toBeLessThan(2000);
    expect(result.heard).toEqual({ ok: true, value: { welcome: "fresh" } });
    expect(fx.server.hits("/proxy/api/unheard").map((h) => h.headers.authorization)).toEqual([
      "Bearer stale",
      "Bearer stale",
      "Bearer stale",
      "Bearer fresh",
    ]);
  });

  it("replays only once: a second 401 rejects", async () => {
    fx.server.script("/proxy/api/always-401", [{ status: 401, body: { error: "no", code: "PROXY_AUTH_FAILED" } }]);
    const result = await fx.page.evaluate(async () => {
      const w = globalThis as unknown as PageWindow;
      let events = 0;
      let n = 0;
      w.AppUser.setSecret("t0", "jwt", "v");
      w.AppUser.addHandler("requestSecretUpdate", () => {
        events += 1;
        n += 1;
        w.AppUser.setSecret(`t${n}`, "jwt", "v");
      });
      const settled = await w.settle(new w.HttpClient({ proxy: "api", auth: { contextId: "v", types: ["jwt"] } }).get("/always-401"));
      return { settled, events };
    });
    expect(result.settled).toMatchObject({ ok: false, status: 401 });
    expect(result.events).toBe(1);
    expect(fx.server.hits("/proxy/api/always-401").map((h) => h.headers.authorization)).toEqual(["Bearer t0", "Bearer t1"]);
  });

  it("shares one refresh between concurrent 401s on a context: one event per auth type", async () => {
    fx.server.script("/proxy/api/shared", requireBearer("renewed"));
    const result = await fx.page.evaluate(async () => {
      const w = globalThis as unknown as PageWindow;
      const events: { type: string; contextId: string }[] = [];
      w.HttpClient.addAuthHandler("session", ({ secret }: { secret: string }) => ({ "X-Session": secret }));
      w.AppUser.setSecret("old", "jwt", "shared-ctx");
      w.AppUser.setSecret("s-old", "session", "shared-ctx");
      w.AppUser.addHandler("requestSecretUpdate", (payload: { type: string; contextId: string }) => {
        events.push(payload);
        if (payload.type === "jwt") setTimeout(() => w.AppUser.setSecret("renewed", "jwt", "shared-ctx"), 150);
      });
      const c = new w.HttpClient({ proxy: "api", auth: { contextId: "shared-ctx", types: ["jwt", "session"], refreshTimeoutMs: 2000 } });
      const values = await Promise.all([c.get("/shared"), c.get("/shared"), c.get("/shared"), new w.HttpClient({ proxy: "api", auth: { contextId: "shared-ctx", types: ["jwt"] } }).get("/shared")]);
      return { values, events };
    });
    expect(result.values).toEqual([{ welcome: "renewed" }, { welcome: "renewed" }, { welcome: "renewed" }, { welcome: "renewed" }]);
    expect(result.events).toEqual([
      { type: "jwt", contextId: "shared-ctx" },
      { type: "session", contextId: "shared-ctx" },
    ]);
    expect(fx.server.hits("/proxy/api/shared")).toHaveLength(8);
  });

  it("replays at once, without an event, when the secret changed while the request was in flight", async () => {
    fx.server.script("/proxy/api/race", (request) =>
      request.headers.authorization === "Bearer new" ? { body: { ok: true } } : { status: 401, delayMs: 200 },
    );
    const result = await fx.page.evaluate(async () => {
      const w = globalThis as unknown as PageWindow;
      let events = 0;
      w.AppUser.addHandler("requestSecretUpdate", () => (events += 1));
      w.AppUser.setSecret("old", "jwt", "r");
      const pending = new w.HttpClient({ proxy: "api", auth: { contextId: "r", types: ["jwt"] } }).get("/race");
      setTimeout(() => w.AppUser.setSecret("new", "jwt", "r"), 50);
      return { value: await pending, events };
    });
    expect(result).toEqual({ value: { ok: true }, events: 0 });
  });

  it("does not refresh when refreshOn401 is false", async () => {
    fx.server.script("/proxy/api/no-refresh", requireBearer("fresh"));
    const result = await fx.page.evaluate(async () => {
      const w = globalThis as unknown as PageWindow;
      let events = 0;
      w.AppUser.setSecret("stale", "jwt", "v");
      w.AppUser.addHandler("requestSecretUpdate", () => {
        events += 1;
        w.AppUser.setSecret("fresh", "jwt", "v");
      });
      const c = new w.HttpClient({ proxy: "api", auth: { contextId: "v", types: ["jwt"], refreshOn401: false } });
      return { settled: await w.settle(c.get("/no-refresh")), events };
    });
    expect(result.settled).toMatchObject({ ok: false, status: 401 });
    expect(result.events).toBe(0);
    expect(fx.server.hits("/proxy/api/no-refresh")).toHaveLength(1);
  });

  it("lets the caller abort while waiting for a new secret", async () => {
    fx.server.script("/proxy/api/abort-refresh", requireBearer("never"));
    const result = await fx.page.evaluate(async () => {
      const w = globalThis as unknown as PageWindow;
      w.AppUser.setSecret("stale", "jwt", "a");
      // Someone listens but never answers, so the request waits for a secret.
      w.AppUser.addHandler("requestSecretUpdate", () => {});
      const controller = new AbortController();
      const c = new w.HttpClient({ proxy: "api", auth: { contextId: "a", types: ["jwt"] } });
      const started = w.now();
      const pending = w.settle(c.get("/abort-refresh", { signal: controller.signal }));
      setTimeout(() => controller.abort(), 200);
      return { settled: await pending, elapsed: w.now() - started };
    });
    expect(result.settled).toMatchObject({ ok: false, name: "AbortError" });
    expect(result.elapsed).toBeLessThan(2000);
  });
});
