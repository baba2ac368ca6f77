// docs/guides/server-methods.md "Exposing a method: authentication": a verifier name belongs to whoever registers it
// first; another plugin registering it fails its own item, naming both; built-ins may be replaced.
import { describe, expect, it } from "vitest";
import { startServer } from "../helpers/server.js";
import { rpc } from "../helpers/http.js";
import { tempApp } from "../helpers/app-root.js";

const hook = (name: string) =>
  `export function register(api) { api.registerRpcAuthVerifier(${JSON.stringify(name)}, () => true); }\n` +
  `export const policy = { ping: { auth: { public: true } } }; export function ping() { return "pong"; }`;

describe("verifier names", () => {
  it("refuse a second registration of a name by another item, and let a built-in be replaced", async () => {
    const root = tempApp({ files: { "modules/a/register.server.mjs": hook("shared"), "modules/b/register.server.mjs": hook("shared"), "modules/c/register.server.mjs": hook("jwt") } });
    const app = await startServer({ root });
    try {
      expect((await rpc(app.url, "module/a/ping")).body.result).toBe("pong");
      expect((await rpc(app.url, "module/b/ping")).body.code).toBe("RPC_TARGET_UNAVAILABLE");
      expect((await rpc(app.url, "module/c/ping")).body.result).toBe("pong");
      const failure = app.logs.lines.find((line) => line.id === "b" && line.level === 50);
      expect(String(failure?.msg)).toMatch(/RPC verifier "shared" is already registered by module a; module b cannot register it too/);
    } finally {
      await app.close();
    }
  });

  it("drop the verifiers of an item that failed; a context naming one stops the start, naming the item", async () => {
    const root = tempApp({
      files: { "modules/d/register.server.mjs": "export function register(api) { api.registerRpcAuthVerifier('dv', () => true); throw new Error('later failure'); }" },
    });
    const config = { server: { secure: { rpcVerifiers: { partner: { verifiers: { dv: {} } } } } } };
    await expect(startServer({ root, config })).rejects.toThrow(/dv.*\(failed to load: module d\)/);
  });
});
