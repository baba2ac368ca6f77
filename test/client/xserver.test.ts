/**
 * window.xserver and AppElement in Chromium (docs/guides/browser.md "RPC calls with
 * `xserver`", "Dev-mode routes", "`AppElement`").
 */
import { expect, it } from "vitest";
import { describeInBrowser, useBrowserFixture, type PageWindow } from "../helpers/browser.js";
import { CSRF_TOKEN } from "../helpers/fixture-server.js";

interface RpcEcho {
  path: string;
  body: { args: unknown[]; viewerId?: string; contextId?: string };
  csrf: string | null;
}

describeInBrowser("xserver", () => {
  const fx = useBrowserFixture();

  it("posts { args: [input] } to /__rpc/module/<id>/<method> with the CSRF header and resolves to result", async () => {
    const result = (await fx.page.evaluate(async () => {
      const w = globalThis as unknown as PageWindow;
      return w.xserver.module.notes.list({ folder: "inbox" });
    })) as RpcEcho;
    expect(result).toEqual({ path: "/__rpc/module/notes/list", body: { args: [{ folder: "inbox" }] }, csrf: CSRF_TOKEN });
    const [hit] = fx.server.hits("/__rpc/module/notes/list");
    expect(hit?.method).toBe("POST");
    expect(hit?.headers["content-type"]).toBe("application/json");
  });

  it("sends { args: [] } without an argument, and calls plugins the same way", async () => {
    const [none, plugin, falsy] = (await fx.page.evaluate(async () => {
      const w = globalThis as unknown as PageWindow;
      return [await w.xserver.module.status.ping(), await w.xserver.plugin.weather.forecast("Oslo"), await w.xserver.plugin.weather.flag(false)];
    })) as RpcEcho[];
    expect(none?.body).toEqual({ args: [] });
    expect(plugin?.path).toBe("/__rpc/plugin/weather/forecast");
    expect(plugin?.body).toEqual({ args: ["Oslo"] });
    expect(falsy?.body).toEqual({ args: [false] });
  });

  it("URL-encodes ids and method names", async () => {
    await fx.page.evaluate(async () => {
      const w = globalThis as unknown as PageWindow;
      await w.xserver.module["my mod/x"]["do?it"](1);
      await w.xserver.plugin["../admin"]["#frag"](1);
    });
    expect(fx.server.hits("/__rpc/module/my%20mod%2Fx/do%3Fit")).toHaveLength(1);
    expect(fx.server.hits("/__rpc/plugin/..%2Fadmin/%23frag")).toHaveLength(1);
  });

  it("sends viewerId and contextId when known; a call's own contextId wins", async () => {
    const [plain, withDefaults, overridden] = (await fx.page.evaluate(async () => {
      const w = globalThis as unknown as PageWindow;
      const plain = await w.xserver.module.m.a(1);
      w.xserver.viewerId = "viewer-7";
      w.xserver.contextId = "default-ctx";
      const withDefaults = await w.xserver.module.m.b(2);
      const overridden = await w.xserver.module.m.c(3, { contextId: "call-ctx", viewerId: "v2" });
      return [plain, withDefaults, overridden];
    })) as RpcEcho[];
    expect(plain?.body).toEqual({ args: [1] });
    expect(withDefaults?.body).toEqual({ args: [2], viewerId: "viewer-7", contextId: "default-ctx" });
    expect(overridden?.body).toEqual({ args: [3], viewerId: "v2", contextId: "call-ctx" });
  });

  it("rejects an error answer with status, code and details", async () => {
    fx.server.script("/__rpc/plugin/p/fail", [{ status: 403, body: { error: "bad csrf", code: "RPC_BAD_CSRF", details: { hint: "reload" } } }]);
    fx.server.script("/__rpc/module/m/busy", [{ status: 503, headers: { "Retry-After": "0" }, body: { error: "open", code: "RPC_CIRCUIT_OPEN", details: {} } }]);
    const [fail, busy] = await fx.page.evaluate(async () => {
      const w = globalThis as unknown as PageWindow;
      return [await w.settle(w.xserver.plugin.p.fail({ x: 1 })), await w.settle(w.xserver.module.m.busy())];
    });
    expect(fail).toEqual({
      ok: false,
      name: "HttpError",
      message: "bad csrf",
      status: 403,
      code: "RPC_BAD_CSRF",
      details: { hint: "reload" },
      body: { error: "bad csrf", code: "RPC_BAD_CSRF", details: { hint: "reload" } },
      isHttpError: true,
    });
    expect(busy).toMatchObject({ ok: false, status: 503, code: "RPC_CIRCUIT_OPEN" });
    // An RPC is a POST: a 503 says the server did not run it, so it was retried.
    expect(fx.server.hits("/__rpc/module/m/busy")).toHaveLength(4);
  });

  it("tells a method's error answer apart with xserver.isRpcError(error, method)", async () => {
    fx.server.script("/__rpc/plugin/notes/get", [{ status: 404, body: { error: "Not found", code: "NOTE_MISSING", details: {} } }]);
    const checks = await fx.page.evaluate(async () => {
      const w = globalThis as unknown as PageWindow;
      const { xserver } = w;
      const error = await xserver.plugin.notes.get({ id: 1 }).then(
        () => undefined,
        (reason: unknown) => reason,
      );
      return {
        code: (error as { code?: unknown }).code,
        sameMethod: xserver.isRpcError(error, xserver.plugin.notes.get),
        anyCall: xserver.isRpcError(error),
        otherMethod: xserver.isRpcError(error, xserver.plugin.notes.search),
        otherItem: xserver.isRpcError(error, xserver.plugin.other.get),
        streamTwin: xserver.isRpcError(error, xserver.plugin.notes.$stream.get),
        plainError: xserver.isRpcError(new Error("x"), xserver.plugin.notes.get),
      };
    });
    // The stream twin calls the same path: an error of either call is one of that method.
    expect(checks).toEqual({ code: "NOTE_MISSING", sameMethod: true, anyCall: true, otherMethod: false, otherItem: false, streamTwin: true, plainError: false });
  });

  it("resolves undefined results to null and reads result from the answer", async () => {
    fx.server.script("/__rpc/module/m/nothing", [{ body: {} }]);
    fx.server.script("/__rpc/module/m/zero", [{ body: { result: 0 } }]);
    const values = await fx.page.evaluate(async () => {
      const w = globalThis as unknown as PageWindow;
      return [await w.xserver.module.m.nothing(), await w.xserver.module.m.zero()];
    });
    expect(values).toEqual([null, 0]);
  });

  it("does not turn then, toJSON or symbol keys into RPC methods", async () => {
    const result = await fx.page.evaluate(async () => {
      const w = globalThis as unknown as PageWindow;
      const target = w.xserver.module.x;
      const awaitedTarget = await w.xserver.module.x;
      const awaitedScope = await w.xserver.module;
      return {
        awaitedIsTarget: awaitedTarget === target,
        awaitedScopeIsScope: awaitedScope === w.xserver.module,
        then: typeof target.then,
        toJSON: typeof target.toJSON,
        scopeThen: typeof w.xserver.module.then,
        json: JSON.stringify({ t: target }),
        iterator: typeof target[Symbol.iterator],
        toPrimitive: typeof target[Symbol.toPrimitive],
        constructorName: typeof target.constructor,
        sameFunction: target.m === target.m,
        callable: typeof target.anyName,
      };
    });
    expect(result).toEqual({
      awaitedIsTarget: true,
      awaitedScopeIsScope: true,
      then: "undefined",
      toJSON: "undefined",
      scopeThen: "undefined",
      json: '{"t":{}}',
      iterator: "undefined",
      toPrimitive: "undefined",
      constructorName: "undefined",
      sameFunction: true,
      callable: "function",
    });
    expect(fx.server.requests).toHaveLength(0);
  });

  it("reaches names the proxies hide through xserver.call", async () => {
    const result = (await fx.page.evaluate(async () => {
      const w = globalThis as unknown as PageWindow;
      return w.xserver.call("module", "then", "then", { a: 1 });
    })) as RpcEcho;
    expect(result.path).toBe("/__rpc/module/then/then");
    expect(result.body).toEqual({ args: [{ a: 1 }] });
  });

  it("calls the dev-mode routes: server.core.getStatus, server.core.getLogs and the server.dev.getLogs alias", async () => {
    const [status, logs, alias] = (await fx.page.evaluate(async () => {
      const w = globalThis as unknown as PageWindow;
      return [
        await w.xserver.server.core.getStatus(),
        await w.xserver.server.core.getLogs({ afterId: 10, limit: 5 }),
        await w.xserver.server.dev.getLogs({ afterId: 0, limit: 1 }),
      ];
    })) as RpcEcho[];
    expect(status).toEqual({ path: "/__rpc/server/core/getStatus", body: { args: [] }, csrf: CSRF_TOKEN });
    expect(logs).toEqual({ path: "/__rpc/server/core/getLogs", body: { args: [{ afterId: 10, limit: 5 }] }, csrf: CSRF_TOKEN });
    expect(alias?.path).toBe("/__rpc/server/dev/getLogs");
    expect(alias?.body).toEqual({ args: [{ afterId: 0, limit: 1 }] });
  });

  it("uses an application HttpClient that can be replaced by setHttpClient or assignment", async () => {
    const result = await fx.page.evaluate(async () => {
      const w = globalThis as unknown as PageWindow;
      const defaultIsClient = w.xserver.httpClient instanceof w.HttpClient;
      w.AppUser.setSecret("rpc-token", "jwt", "rpc");
      w.xserver.setHttpClient(new w.HttpClient({ auth: { contextId: "rpc", types: ["jwt"] } }));
      await w.xserver.module.m.first();
      const seen: string[] = [];
      w.xserver.httpClient = {
        request: (path: string, options: unknown) => {
          seen.push(path);
          return new w.HttpClient().request(path, options);
        },
      };
      await w.xserver.module.m.second();
      let proxyRefused = "";
      try {
        w.xserver.setHttpClient(new w.HttpClient({ proxy: "p" }));
      } catch (e) {
        proxyRefused = (e as Error).name;
      }
      return { defaultIsClient, seen, proxyRefused };
    });
    expect(result).toEqual({ defaultIsClient: true, seen: ["/__rpc/module/m/second"], proxyRefused: "TypeError" });
    expect(fx.server.hits("/__rpc/module/m/first")[0]?.headers.authorization).toBe("Bearer rpc-token");
    expect(fx.server.hits("/__rpc/module/m/second")[0]?.headers.authorization).toBeUndefined();
  });

  it("passes a caller's signal through", async () => {
    fx.server.script("/__rpc/module/m/slow", [{ delayMs: 2000, body: { result: 1 } }]);
    const settled = await fx.page.evaluate(async () => {
      const w = globalThis as unknown as PageWindow;
      const controller = new AbortController();
      setTimeout(() => controller.abort(), 100);
      return w.settle(w.xserver.module.m.slow(1, { signal: controller.signal }));
    });
    expect(settled).toMatchObject({ ok: false, name: "AbortError" });
  });
});

describeInBrowser("AppElement", () => {
  const fx = useBrowserFixture();

  it("calls its plugin's or module's methods through this.server() from a subclass", async () => {
    const result = (await fx.page.evaluate(async () => {
      const w = globalThis as unknown as PageWindow;
      class Weather extends w.AppElement {
        constructor() {
          super({ kind: "plugin", id: "weather" });
        }
        forecast(city: string): Promise<unknown> {
          return this.server().forecast({ city });
        }
      }
      const weather = new Weather();
      return { kind: weather.kind, id: weather.id, answer: await weather.forecast("Oslo") };
    })) as { kind: string; id: string; answer: RpcEcho };
    expect(result.kind).toBe("plugin");
    expect(result.id).toBe("weather");
    expect(result.answer).toEqual({ path: "/__rpc/plugin/weather/forecast", body: { args: [{ city: "Oslo" }] }, csrf: CSRF_TOKEN });
  });

  it("takes contextId from options, with callOptions.contextId winning", async () => {
    const [fromOptions, fromCall, none] = (await fx.page.evaluate(async () => {
      const w = globalThis as unknown as PageWindow;
      const el = new w.AppElement({ kind: "module", id: "notes" });
      const server = el.server({ contextId: "element-ctx" });
      return [await server.save("a"), await server.save("b", { contextId: "call-ctx" }), await el.server().save()];
    })) as RpcEcho[];
    expect(fromOptions?.body).toEqual({ args: ["a"], contextId: "element-ctx" });
    expect(fromCall?.body).toEqual({ args: ["b"], contextId: "call-ctx" });
    expect(none).toEqual({ path: "/__rpc/module/notes/save", body: { args: [] }, csrf: CSRF_TOKEN });
  });

  it("uses the chosen client's auth, and the application client by default", async () => {
    await fx.page.evaluate(async () => {
      const w = globalThis as unknown as PageWindow;
      w.AppUser.setSecret("element-token", "jwt", "el");
      w.AppUser.setSecret("app-token", "jwt", "app");
      const el = new w.AppElement({ kind: "plugin", id: "p" });
      await el.server({ client: new w.HttpClient({ auth: { contextId: "el", types: ["jwt"] } }) }).own();
      await el.server().before();
      w.xserver.setHttpClient(new w.HttpClient({ auth: { contextId: "app", types: ["jwt"] } }));
      await el.server().after();
    });
    expect(fx.server.hits("/__rpc/plugin/p/own")[0]?.headers.authorization).toBe("Bearer element-token");
    expect(fx.server.hits("/__rpc/plugin/p/before")[0]?.headers.authorization).toBeUndefined();
    expect(fx.server.hits("/__rpc/plugin/p/after")[0]?.headers.authorization).toBe("Bearer app-token");
  });

  it("works inside a custom element by composition", async () => {
    const text = await fx.page.evaluate(async () => {
      const w = globalThis as unknown as PageWindow;
      class NotesCount extends w.HTMLElement {
        app = new w.AppElement({ kind: "module", id: "notes" });
        done: Promise<void> | undefined;
        connectedCallback(): void {
          this.done = this.app
            .server()
            .count({ folder: this.getAttribute("folder") })
            .then((answer: RpcEcho) => {
              this.textContent = `${answer.path} ${JSON.stringify(answer.body.args)}`;
            });
        }
      }
      w.customElements.define("notes-count", NotesCount);
      const el = w.document.createElement("notes-count");
      el.setAttribute("folder", "inbox");
      w.document.body.append(el);
      await el.done;
      return el.textContent;
    });
    expect(text).toBe('/__rpc/module/notes/count [{"folder":"inbox"}]');
  });

  it("does not make then or toJSON into methods", async () => {
    const result = await fx.page.evaluate(async () => {
      const w = globalThis as unknown as PageWindow;
      const server = new w.AppElement({ kind: "module", id: "m" }).server();
      const awaited = await server;
      return { same: awaited === server, then: typeof server.then, json: JSON.stringify(server) };
    });
    expect(result).toEqual({ same: true, then: "undefined", json: "{}" });
    expect(fx.server.requests).toHaveLength(0);
  });

  it("refuses a bad kind or id", async () => {
    const names = await fx.page.evaluate(() => {
      const w = globalThis as unknown as PageWindow;
      const attempt = (target: unknown): string | null => {
        try {
          new w.AppElement(target);
          return null;
        } catch (e) {
          return (e as Error).name;
        }
      };
      return [attempt(undefined), attempt({ kind: "server", id: "x" }), attempt({ kind: "module", id: "" }), attempt({ kind: "module", id: "ok" })];
    });
    expect(names).toEqual(["TypeError", "TypeError", "TypeError", null]);
  });
});
