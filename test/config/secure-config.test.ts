// docs/guides/server-methods.md "Secure config": the deployer's block over the author's server.json, own keys only,
// frozen copies; the readers of APP_SERVER see only the calling item's block.
import { describe, expect, it } from "vitest";
import { mergeSecureTiers, itemSecure } from "../../dist/config/secure-config.js";
import * as helpers from "../../dist/plugin-api/secure-helpers.js";

describe("mergeSecureTiers", () => {
  it("lets the deployer win key by key, merging objects and replacing arrays and scalars", () => {
    const author = { defaults: { baseUrl: "https://author", apiKey: "placeholder", models: ["a", "b"], nested: { keep: 1, swap: 1 } }, onlyAuthor: true };
    const deployer = { defaults: { apiKey: "real", models: ["c"], nested: { swap: 2 }, extra: null }, onlyDeployer: 1 };
    expect(mergeSecureTiers(author, deployer)).toEqual({
      defaults: { baseUrl: "https://author", apiKey: "real", models: ["c"], nested: { keep: 1, swap: 2 }, extra: null },
      onlyAuthor: true,
      onlyDeployer: 1,
    });
  });

  it("returns deep-frozen copies that share nothing with its inputs", () => {
    const author = { a: { b: [1, { c: 2 }] } };
    const merged = mergeSecureTiers(author, {}) as { a: { b: [number, { c: number }] } };
    expect(Object.isFrozen(merged) && Object.isFrozen(merged.a) && Object.isFrozen(merged.a.b) && Object.isFrozen(merged.a.b[1])).toBe(true);
    author.a.b.push(3);
    expect(merged.a.b).toHaveLength(2);
  });

  it("drops keys that could reach a prototype, from either tier", () => {
    const deployer = JSON.parse('{"__proto__": {"polluted": true}, "constructor": {"prototype": {"x": 1}}, "ok": {"__proto__": {"y": 1}, "v": 1}}');
    const merged = mergeSecureTiers(JSON.parse('{"prototype": 1, "ok": {"w": 2}}'), deployer) as Record<string, unknown>;
    expect(merged).toEqual({ ok: { w: 2, v: 1 } });
    expect(Object.keys(merged)).toEqual(["ok"]);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(Object.getPrototypeOf(merged.ok)).toBe(Object.prototype);
  });

  it("gives {} for neither tier, and tolerates tiers that are not objects", () => {
    expect(mergeSecureTiers(undefined, undefined)).toEqual({});
    expect(mergeSecureTiers([1], "x")).toEqual({});
  });
});

describe("secure readers", () => {
  const rpcVerifiers = { idp: { enabled: true, mode: "all", verifiers: { jwt: {} } }, default: { enabled: true, mode: "any", verifiers: {} } };
  const secure = itemSecure("plugin", "me", mergeSecureTiers({ k: { v: 0, f: false, n: null, e: "" } }, { k: { deep: "x" } }), rpcVerifiers);
  const ctx = { kind: "plugin", itemId: "me", contextId: "idp", secure };

  it("read the own block; another id, another kind or a prototype name finds {}", () => {
    expect(helpers.getSecurePluginConfig(ctx)).toEqual({ k: { v: 0, f: false, n: null, e: "", deep: "x" } });
    expect(helpers.getSecureItemConfig(ctx)).toBe(helpers.getSecurePluginConfig(ctx));
    expect(helpers.getSecurePluginConfig(ctx, "other")).toEqual({});
    expect(helpers.getSecureModuleConfig(ctx)).toEqual({});
    expect(helpers.getSecurePluginConfig(ctx, "constructor")).toEqual({});
    expect(helpers.getSecureItemConfig({ ...ctx, kind: "server" })).toEqual({});
    expect(helpers.getSecurePluginConfig(null)).toEqual({});
  });

  it("getSecureValue walks own properties by dotted path or array, null is a value; requireSecureValue refuses undefined, null and empty", () => {
    expect(helpers.getSecureValue(ctx, "plugins.me.k.deep")).toBe("x");
    expect(helpers.getSecureValue(ctx, ["plugins", "me", "k", "v"])).toBe(0);
    expect(helpers.getSecureValue(ctx, "plugins..me.k.n", "fb")).toBeNull();
    expect(helpers.getSecureValue(ctx, "plugins.me.k.toString", "fb")).toBe("fb");
    expect(helpers.getSecureValue(ctx, "plugins.me.k.deep.length", "fb")).toBe("fb");
    expect(helpers.requireSecureValue(ctx, "plugins.me.k.f")).toBe(false);
    expect(helpers.requireSecureValue(ctx, "plugins.me.k.v")).toBe(0);
    for (const path of ["plugins.me.k.n", "plugins.me.k.e", "plugins.me.k.none"]) {
      expect(() => helpers.requireSecureValue(ctx, path)).toThrow(`Missing secure configuration: ${path}`);
    }
  });

  it("getRpcAuthConfig: the named context, else the call's, else default, else null", () => {
    expect(helpers.getRpcAuthConfig(ctx)).toEqual(rpcVerifiers.idp);
    expect(helpers.getRpcAuthConfig(ctx, "nope")).toEqual(rpcVerifiers.default);
    expect(helpers.getRpcAuthConfig(ctx, "__proto__")).toEqual(rpcVerifiers.default);
    expect(helpers.getRpcAuthConfig({ secure: itemSecure("plugin", "me", {}, {}) }, "x")).toBeNull();
  });
});
