/**
 * RPC call options in Chromium (docs/guides/browser.md "RPC calls with `xserver`" and
 * "`AppElement`"): `httpClient` as an alias of `client`, with `client` winning, and a
 * per-call `timeoutMs`, where `0` disables the client-side timeout.
 */
import { expect, it } from "vitest";
import { describeInBrowser, useBrowserFixture, type PageWindow } from "../helpers/browser.js";

describeInBrowser("RPC call options", () => {
  const fx = useBrowserFixture();

  it("sends an xserver call through callOptions.httpClient, with that client's auth headers", async () => {
    await fx.page.evaluate(async () => {
      const w = globalThis as unknown as PageWindow;
      const tagged = (tag: string): unknown =>
        new w.HttpClient({ auth: { types: ["tag"], handlers: { tag: () => ({ "x-client": tag }) } }, secretStore: { getSecret: () => "s", setSecret() {} } });
      await w.xserver.module.m.alias(1, { httpClient: tagged("alias") });
      await w.xserver.module.m.both(2, { httpClient: tagged("alias"), client: tagged("client") });
      await w.xserver.call("plugin", "p", "viaCall", 3, { httpClient: tagged("alias") });
      await w.xserver.module.m.none(4);
    });
    expect(fx.server.hits("/__rpc/module/m/alias")[0]?.headers["x-client"]).toBe("alias");
    expect(fx.server.hits("/__rpc/module/m/both")[0]?.headers["x-client"]).toBe("client");
    expect(fx.server.hits("/__rpc/plugin/p/viaCall")[0]?.headers["x-client"]).toBe("alias");
    expect(fx.server.hits("/__rpc/module/m/none")[0]?.headers["x-client"]).toBeUndefined();
  });

  it("takes httpClient in AppElement.server() options and in its call options; the call's own transport wins", async () => {
    const seen = await fx.page.evaluate(async () => {
      const w = globalThis as unknown as PageWindow;
      const seen: string[] = [];
      const spy = (name: string) => ({
        request: (path: string, options: unknown) => {
          seen.push(`${name} ${path}`);
          return new w.HttpClient().request(path, options);
        },
      });
      const el = new w.AppElement({ kind: "plugin", id: "p" });
      await el.server({ httpClient: spy("element") }).a();
      await el.server({ httpClient: spy("element-alias"), client: spy("element-client") }).b();
      await el.server({ client: spy("element") }).c(undefined, { httpClient: spy("call") });
      await el.server().d(undefined, { httpClient: spy("call-alias"), client: spy("call-client") });
      return seen;
    });
    expect(seen).toEqual([
      "element /__rpc/plugin/p/a",
      "element-client /__rpc/plugin/p/b",
      "call /__rpc/plugin/p/c",
      "call-client /__rpc/plugin/p/d",
    ]);
  });

  it("checks an httpClient like a client: one in proxy mode is refused", async () => {
    const settled = await fx.page.evaluate(async () => {
      const w = globalThis as unknown as PageWindow;
      return w.settle(w.xserver.module.m.x(1, { httpClient: new w.HttpClient({ proxy: "p" }) }));
    });
    expect(settled).toMatchObject({ ok: false, name: "TypeError" });
    expect(fx.server.requests).toHaveLength(0);
  });

  it("passes timeoutMs to the transport: 0 disables the client's timeout, a number replaces it", async () => {
    fx.server.script("/__rpc/module/m/slow", [{ delayMs: 700, body: { result: "done" } }]);
    const result = await fx.page.evaluate(async () => {
      const w = globalThis as unknown as PageWindow;
      w.xserver.setHttpClient(new w.HttpClient({ timeoutMs: 250 }));
      const el = new w.AppElement({ kind: "module", id: "m" });
      return {
        clientTimeout: await w.settle(w.xserver.module.m.slow()),
        disabled: await w.settle(w.xserver.module.m.slow(undefined, { timeoutMs: 0 })),
        elementDisabled: await w.settle(el.server().slow(undefined, { timeoutMs: 0 })),
        longer: await w.settle(w.xserver.module.m.slow(undefined, { timeoutMs: 5000 })),
      };
    });
    expect(result.clientTimeout).toMatchObject({ ok: false, name: "TimeoutError", code: "CLIENT_TIMEOUT" });
    expect(result.disabled).toEqual({ ok: true, value: "done" });
    expect(result.elementDisabled).toEqual({ ok: true, value: "done" });
    expect(result.longer).toEqual({ ok: true, value: "done" });
  });

  it("hands timeoutMs to a transport of the caller's own, and leaves it out when not given", async () => {
    const seen = await fx.page.evaluate(async () => {
      const w = globalThis as unknown as PageWindow;
      const seen: unknown[] = [];
      const client = {
        request: (path: string, options: { timeoutMs?: number }) => {
          seen.push("timeoutMs" in options ? options.timeoutMs : "absent");
          return new w.HttpClient().request(path, options);
        },
      };
      await w.xserver.module.m.a(1, { client, timeoutMs: 0 });
      await w.xserver.module.m.b(1, { client, timeoutMs: 1234 });
      await w.xserver.module.m.c(1, { client });
      return seen;
    });
    expect(seen).toEqual([0, 1234, "absent"]);
  });
});
