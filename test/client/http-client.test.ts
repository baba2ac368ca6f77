/**
 * HttpClient in Chromium: globals, URL rules (plain and proxy mode), bodies, query,
 * `expect`, HttpError, CSRF header and the proxy-mode warning.
 */
import { expect, it } from "vitest";
import { describeInBrowser, useBrowserFixture, type PageWindow, type Settled } from "../helpers/browser.js";
import { CSRF_TOKEN } from "../helpers/fixture-server.js";

interface Echo {
  method: string;
  url: string;
  headers: Record<string, string>;
  body: string;
}

describeInBrowser("HttpClient", () => {
  const fx = useBrowserFixture();

  it("installs HttpClient, HttpError, AppUser (the instance), AppUserStore, AppElement and xserver", async () => {
    const shape = await fx.page.evaluate(() => {
      const w = globalThis as unknown as PageWindow;
      return {
        httpClient: typeof w.HttpClient,
        httpError: typeof w.HttpError,
        appUserIsInstance: w.AppUser instanceof w.AppUserStore,
        setSecret: typeof w.AppUser.setSecret,
        appElement: typeof w.AppElement,
        module: typeof w.xserver.module,
        plugin: typeof w.xserver.plugin,
        getStatus: typeof w.xserver.server.core.getStatus,
        getLogs: typeof w.xserver.server.core.getLogs,
        devGetLogs: typeof w.xserver.server.dev.getLogs,
        addAuthHandler: typeof w.HttpClient.addAuthHandler,
        removeAuthHandler: typeof w.HttpClient.removeAuthHandler,
      };
    });
    expect(shape).toEqual({
      httpClient: "function",
      httpError: "function",
      appUserIsInstance: true,
      setSecret: "function",
      appElement: "function",
      module: "object",
      plugin: "object",
      getStatus: "function",
      getLogs: "function",
      devGetLogs: "function",
      addAuthHandler: "function",
      removeAuthHandler: "function",
    });
  });

  it("has the documented defaults", async () => {
    const defaults = await fx.page.evaluate(() => {
      const w = globalThis as unknown as PageWindow;
      const c = new w.HttpClient();
      return {
        timeoutMs: c.timeoutMs,
        maxRetries: c.maxRetries,
        refreshOn401: c.auth.refreshOn401,
        required: c.auth.required,
        refreshTimeoutMs: c.auth.refreshTimeoutMs,
        storeIsAppUser: c.secretStore === w.AppUser,
      };
    });
    expect(defaults).toEqual({ timeoutMs: 30000, maxRetries: 3, refreshOn401: true, required: false, refreshTimeoutMs: 20000, storeIsAppUser: true });
  });

  it("joins baseURL and path with one slash and uses absolute URLs as they are", async () => {
    const urls = await fx.page.evaluate(async (other) => {
      const w = globalThis as unknown as PageWindow;
      const a = new w.HttpClient({ baseURL: "/echo/api/" });
      const b = new w.HttpClient({ baseURL: "/echo/api" });
      const none = new w.HttpClient();
      return [
        (await a.get("/items")).url,
        (await a.get("items/1")).url,
        (await b.get("//x")).url,
        (await none.get("/echo/plain")).url,
        (await a.get(`${other}/abs/path`)).url,
      ];
    }, fx.other.origin);
    expect(urls).toEqual(["/echo/api/items", "/echo/api/items/1", "/echo/api/x", "/echo/plain", "/abs/path"]);
    expect(fx.other.hits("/abs/path")).toHaveLength(1);
    expect(fx.server.hits("/echo/api/items")).toHaveLength(1);
  });

  it("sends proxy-mode requests to /proxy/<alias>/<baseURL>/<path>?query with credentials same-origin", async () => {
    const result = await fx.page.evaluate(async () => {
      const w = globalThis as unknown as PageWindow;
      const seen: { url: string; credentials: string }[] = [];
      const original = w.fetch;
      w.fetch = (input, init) => {
        seen.push({ url: String(input), credentials: init?.credentials });
        return original(input, init);
      };
      const withBase = new w.HttpClient({ proxy: "weather", baseURL: "/v1/" });
      const bare = new w.HttpClient({ proxy: "weather" });
      const a = await withBase.get("/forecast", { query: { city: "Oslo" } });
      const b = await bare.get("forecast/today");
      const absolute = await w.settle(bare.get("https://example.com/x"));
      return { a: a.url, b: b.url, seen, absolute };
    });
    expect(result.a).toBe("/proxy/weather/v1/forecast?city=Oslo");
    expect(result.b).toBe("/proxy/weather/forecast/today");
    expect(result.seen.map((s) => s.credentials)).toEqual(["same-origin", "same-origin"]);
    // Proxy mode promises every request goes through the alias.
    expect(result.absolute).toMatchObject({ ok: false, name: "TypeError" });
    expect(fx.server.hits("/proxy/weather/v1/forecast")).toHaveLength(1);
  });

  it("serialises objects as JSON and passes FormData, Blob, URLSearchParams, strings and ArrayBuffers untouched", async () => {
    const echoes = (await fx.page.evaluate(async () => {
      const w = globalThis as unknown as PageWindow;
      const c = new w.HttpClient();
      const form = new FormData();
      form.append("field", "value");
      return [
        await c.post("/echo/json", { a: 1, list: [1, 2] }),
        await c.post("/echo/array", [1, "two"]),
        await c.put("/echo/form", form),
        await c.post("/echo/blob", new Blob(["blob-bytes"], { type: "application/octet-stream" })),
        await c.post("/echo/params", new URLSearchParams({ x: "1", y: "2" })),
        await c.post("/echo/string", "plain text"),
        await c.post("/echo/buffer", new TextEncoder().encode("buf").buffer),
        await c.patch("/echo/own-type", { a: 1 }, { headers: { "Content-Type": "application/merge-patch+json" } }),
      ];
    })) as Echo[];
    const [json, array, form, blob, params, text, buffer, ownType] = echoes;
    expect(json.headers["content-type"]).toBe("application/json");
    expect(JSON.parse(json.body)).toEqual({ a: 1, list: [1, 2] });
    expect(JSON.parse(array.body)).toEqual([1, "two"]);
    expect(form.headers["content-type"]).toMatch(/^multipart\/form-data; boundary=/);
    expect(form.body).toContain('name="field"');
    expect(blob.headers["content-type"]).toBe("application/octet-stream");
    expect(blob.body).toBe("blob-bytes");
    expect(params.headers["content-type"]).toMatch(/^application\/x-www-form-urlencoded/);
    expect(params.body).toBe("x=1&y=2");
    expect(text.headers["content-type"]).toMatch(/^text\/plain/);
    expect(text.body).toBe("plain text");
    expect(buffer.body).toBe("buf");
    expect(buffer.headers["content-type"]).toBeUndefined();
    expect(ownType.headers["content-type"]).toBe("application/merge-patch+json");
    expect(ownType.method).toBe("PATCH");
  });

  it("has get/post/put/patch/delete shorthands with the right methods", async () => {
    const methods = await fx.page.evaluate(async () => {
      const w = globalThis as unknown as PageWindow;
      const c = new w.HttpClient({ baseURL: "/echo" });
      return [
        (await c.get("m")).method,
        (await c.post("m", { x: 1 })).method,
        (await c.put("m", { x: 1 })).method,
        (await c.patch("m", { x: 1 })).method,
        (await c.delete("m")).method,
        (await c.request("m", { method: "put" })).method,
        (await c.request("m")).method,
      ];
    });
    expect(methods).toEqual(["GET", "POST", "PUT", "PATCH", "DELETE", "PUT", "GET"]);
  });

  it("rejects a body on GET before sending, instead of retrying fetch's TypeError", async () => {
    const result = await fx.page.evaluate(async () => {
      const w = globalThis as unknown as PageWindow;
      return w.settle(new w.HttpClient().request("/echo/get-body", { body: { a: 1 } }));
    });
    expect(result).toMatchObject({ ok: false, name: "TypeError" });
    expect(fx.server.hits("/echo/get-body")).toHaveLength(0);
  });

  it("appends query: arrays as repeated keys, null and undefined skipped, after an existing query", async () => {
    const urls = await fx.page.evaluate(async () => {
      const w = globalThis as unknown as PageWindow;
      const c = new w.HttpClient();
      return [
        (await c.get("/echo/q", { query: { tag: ["a", "b"], n: 2, yes: true, skip: null, gone: undefined, sp: "a b&c" } })).url,
        (await c.get("/echo/q?x=1", { query: { y: [1, null, 2] } })).url,
        (await c.get("/echo/q", { query: { only: null } })).url,
      ];
    });
    expect(urls).toEqual(["/echo/q?tag=a&tag=b&n=2&yes=true&sp=a+b%26c", "/echo/q?x=1&y=1&y=2", "/echo/q"]);
  });

  it("parses answers per expect: json, text and auto (JSON content type, text, 204 and empty bodies)", async () => {
    fx.server.script("/json", [{ body: { hello: "world" } }]);
    fx.server.script("/problem", [{ body: '{"p":1}', headers: { "content-type": "application/problem+json" } }]);
    fx.server.script("/text", [{ body: '{"looks":"like json"}', headers: { "content-type": "text/plain" } }]);
    fx.server.script("/no-content", [{ status: 204 }]);
    fx.server.script("/empty", [{ status: 200, body: "", headers: { "content-type": "application/json" } }]);
    fx.server.script("/bad-json", [{ body: "{nope", headers: { "content-type": "application/json" } }]);
    const results = await fx.page.evaluate(async () => {
      const w = globalThis as unknown as PageWindow;
      const c = new w.HttpClient({ maxRetries: 0 });
      return {
        autoJson: await c.get("/json"),
        autoProblem: await c.get("/problem"),
        autoText: await c.get("/text"),
        forcedJson: await c.get("/text", { expect: "json" }),
        forcedText: await c.get("/json", { expect: "text" }),
        noContent: await c.get("/no-content"),
        noContentJson: await c.get("/no-content", { expect: "json" }),
        empty: await c.get("/empty"),
        badJson: await w.settle(c.get("/bad-json")),
        badExpect: await w.settle(c.get("/json", { expect: "xml" })),
      };
    });
    expect(results.autoJson).toEqual({ hello: "world" });
    expect(results.autoProblem).toEqual({ p: 1 });
    expect(results.autoText).toBe('{"looks":"like json"}');
    expect(results.forcedJson).toEqual({ looks: "like json" });
    expect(results.forcedText).toBe('{"hello":"world"}');
    expect(results.noContent).toBeNull();
    expect(results.noContentJson).toBeNull();
    expect(results.empty).toBeNull();
    expect(results.badJson).toMatchObject({ ok: false, name: "ResponseParseError", code: "CLIENT_BAD_RESPONSE", status: 200 });
    expect(results.badExpect).toMatchObject({ ok: false, name: "TypeError" });
  });

  it("rejects non-2xx answers with HttpError carrying status, code, details and body", async () => {
    fx.server.script("/rpc-like", [
      { status: 404, body: { error: "No such method", code: "RPC_UNKNOWN_METHOD", details: { method: "nope" } } },
    ]);
    fx.server.script("/plain-error", [{ status: 418, body: "short and stout", headers: { "content-type": "text/plain" } }]);
    const [rpcLike, plain] = (await fx.page.evaluate(async () => {
      const w = globalThis as unknown as PageWindow;
      const c = new w.HttpClient({ maxRetries: 0 });
      return [await w.settle(c.get("/rpc-like")), await w.settle(c.post("/plain-error", { a: 1 }))];
    })) as Settled[];
    expect(rpcLike).toEqual({
      ok: false,
      name: "HttpError",
      message: "No such method",
      status: 404,
      code: "RPC_UNKNOWN_METHOD",
      details: { method: "nope" },
      body: { error: "No such method", code: "RPC_UNKNOWN_METHOD", details: { method: "nope" } },
      isHttpError: true,
    });
    expect(plain).toMatchObject({ ok: false, name: "HttpError", status: 418, code: "HTTP_418", details: {}, body: "short and stout", isHttpError: true });
    expect(plain.ok === false && plain.message).toContain("418");
  });

  it("adds X-APP-CSRF on same-origin calls, reading the token at every call", async () => {
    const tokens = await fx.page.evaluate(async () => {
      const w = globalThis as unknown as PageWindow;
      const c = new w.HttpClient();
      const first = (await c.get("/echo/csrf")).headers["x-app-csrf"];
      w.APP_CSRF_TOKEN = "rotated-token";
      const second = (await c.get("/echo/csrf")).headers["x-app-csrf"];
      delete w.APP_CSRF_TOKEN;
      const third = (await c.get("/echo/csrf")).headers["x-app-csrf"] ?? null;
      return [first, second, third];
    });
    expect(tokens).toEqual([CSRF_TOKEN, "rotated-token", null]);
  });

  it("never sends the CSRF token to another origin", async () => {
    await fx.page.evaluate(async (other) => {
      const w = globalThis as unknown as PageWindow;
      await new w.HttpClient().get(`${other}/cross`);
      await new w.HttpClient({ baseURL: other }).post("/cross-post", { a: 1 });
    }, fx.other.origin);
    const [get] = fx.other.hits("/cross");
    const [post] = fx.other.hits("/cross-post");
    expect(get?.headers["x-app-csrf"]).toBeUndefined();
    expect(post?.headers["x-app-csrf"]).toBeUndefined();
    expect(post?.body).toBe('{"a":1}');
  });

  it("sends a proxy request without a CSRF token after a warning naming X-APP-CSRF", async () => {
    await fx.open("/no-csrf.html");
    const echo = (await fx.page.evaluate(async () => {
      const w = globalThis as unknown as PageWindow;
      return new w.HttpClient({ proxy: "up" }).get("/things");
    })) as Echo;
    expect(echo.url).toBe("/proxy/up/things");
    expect(echo.headers["x-app-csrf"]).toBeUndefined();
    const warnings = fx.warnings();
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain("X-APP-CSRF");
    expect(warnings[0]).toContain("APP_CSRF_TOKEN");
  });

  it("does not warn about CSRF in proxy mode when the token is there", async () => {
    const echo = (await fx.page.evaluate(async () => {
      const w = globalThis as unknown as PageWindow;
      return new w.HttpClient({ proxy: "up" }).get("/things");
    })) as Echo;
    expect(echo.headers["x-app-csrf"]).toBe(CSRF_TOKEN);
    expect(fx.warnings()).toEqual([]);
  });

  it("lets the caller's headers win over the ones the client adds", async () => {
    const echo = (await fx.page.evaluate(async () => {
      const w = globalThis as unknown as PageWindow;
      w.AppUser.setSecret("stored", "jwt", "c");
      const c = new w.HttpClient({ auth: { types: ["jwt"], contextId: "c" } });
      return c.get("/echo/h", { headers: { Authorization: "Bearer explicit", "X-Extra": "1" } });
    })) as Echo;
    expect(echo.headers.authorization).toBe("Bearer explicit");
    expect(echo.headers["x-extra"]).toBe("1");
  });

  it("rejects bad options with a TypeError", async () => {
    const errors = await fx.page.evaluate(() => {
      const w = globalThis as unknown as PageWindow;
      const attempt = (options: unknown): string | null => {
        try {
          new w.HttpClient(options);
          return null;
        } catch (e) {
          return (e as Error).name;
        }
      };
      return [
        attempt({ maxRetries: -1 }),
        attempt({ maxRetries: 1.5 }),
        attempt({ timeoutMs: -5 }),
        attempt({ proxy: "" }),
        attempt({ proxy: "a", baseURL: "https://example.com" }),
        attempt({ auth: { types: "jwt" } }),
        attempt({ secretStore: {} }),
        attempt({ maxRetries: 0, timeoutMs: 0 }),
      ];
    });
    expect(errors).toEqual(["TypeError", "TypeError", "TypeError", "TypeError", "TypeError", "TypeError", "TypeError", null]);
  });
});
