// docs/guides/server-methods.md "Boot hooks": what registerServerRoute refuses, and how a refusal fails only its item.
import { describe, expect, it } from "vitest";
import { startServer } from "../helpers/server.js";
import { rpc, send } from "../helpers/http.js";
import { tempApp } from "../helpers/app-root.js";

const hook = (prefix: string) =>
  `export function register(api) { api.registerServerRoute(${JSON.stringify(prefix)}, (ctx) => { ctx.res.end(${JSON.stringify(prefix)}); }); }\n` +
  `export const policy = { ping: { auth: { public: true } } }; export function ping() { return "pong"; }`;

describe("registerServerRoute", () => {
  for (const prefix of ["/", "/__rpc", "/__rpc/x", "/proxy", "/health/deep", "/metrics", "/__app", "relative", "/a/../b", "/with space", "/:param", "/star*"]) {
    it(`refuses ${JSON.stringify(prefix)}: the item fails, the rest serves`, async () => {
      const root = tempApp({ files: { "modules/m/register.server.mjs": hook(prefix), "plugins/ok/a.server.mjs": hook("/fine").split("\n")[1]! } });
      const app = await startServer({ root });
      try {
        expect((await rpc(app.url, "module/m/ping")).body.code).toBe("RPC_TARGET_UNAVAILABLE");
        expect((await rpc(app.url, "plugin/ok/ping")).body.result).toBe("pong");
        expect((await send(app.url, "/health")).json).toEqual({ status: "ok" });
        const failure = app.logs.lines.find((line) => line.id === "m" && line.level === 50);
        expect(String(failure?.msg)).toMatch(/registerServerRoute/);
      } finally {
        await app.close();
      }
    });
  }

  it("refuses a prefix another item registered, naming both; --strict exits instead", async () => {
    const files = { "modules/a/register.server.mjs": hook("/shared"), "modules/b/register.server.mjs": hook("/shared/") };
    const app = await startServer({ root: tempApp({ files }) });
    try {
      expect((await send(app.url, "/shared/x")).body).toBe("/shared");
      expect((await rpc(app.url, "module/b/ping")).body.code).toBe("RPC_TARGET_UNAVAILABLE");
      expect(String(app.logs.lines.find((line) => line.id === "b" && line.level === 50)?.msg)).toMatch(/\/shared is already registered by module a; module b cannot register it too/);
    } finally {
      await app.close();
    }
    await expect(startServer({ root: tempApp({ files }), strict: true })).rejects.toThrow(/module b failed to load: .*already registered by module a/);
  });
});
