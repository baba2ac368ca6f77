// docs/guides/server-methods.md "Server methods": discovery rules, boot hooks, start-up errors, dev-mode reload.
// (A config that names an unknown verifier: test/config/startup-errors.test.ts.)
import { describe, expect, it } from "vitest";
import { cpSync, mkdtempSync, writeFileSync, utimesSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startServer } from "../helpers/server.js";
import { openViewer, rpc, send } from "../helpers/http.js";
import { tempApp } from "../helpers/app-root.js";

const FIXTURE = join(import.meta.dirname, "../fixtures/gateway-app");

describe("discovery", () => {
  it("runs each boot hook once, before the server listens", async () => {
    const app = await startServer({ root: FIXTURE });
    try {
      expect((globalThis as { __matrixBootRuns?: number }).__matrixBootRuns).toBe(1);
    } finally {
      await app.close();
    }
  });

  it("with --strict, refuses to start when two files of one plugin export the same name, naming both files", async () => {
    const root = tempApp({
      files: {
        "plugins/p/a.server.mjs": "export function same() { return 1; }",
        "plugins/p/sub/b.server.mjs": "export function same() { return 2; }",
      },
    });
    await expect(startServer({ root, strict: true })).rejects.toThrow(
      new RegExp(`plugin p: method "same" is exported by both ${root}/plugins/p/a.server.mjs and ${root}/plugins/p/sub/b.server.mjs`),
    );
  });

  it("lets a plugin and a module, or two plugins, use the same method names; only *.server.* files count", async () => {
    const pub = "export const policy = { same: { auth: { public: true } }, notServer: { auth: { public: true } } };";
    const root = tempApp({
      files: {
        "plugins/p/a.server.mjs": `${pub} export function same() { return 'plugin p'; }`,
        "plugins/q/a.server.mjs": `${pub} export function same() { return 'plugin q'; }`,
        "modules/p/a.server.mjs": `${pub} export function same() { return 'module p'; }`,
        "modules/p/helper.mjs": "export function notServer() { return 'no'; }",
      },
    });
    const app = await startServer({ root, config: {} });
    try {
      expect((await rpc(app.url, "plugin/p/same")).body.result).toBe("plugin p");
      expect((await rpc(app.url, "plugin/q/same")).body.result).toBe("plugin q");
      expect((await rpc(app.url, "module/p/same")).body.result).toBe("module p");
      expect((await rpc(app.url, "module/p/notServer")).body.code).toBe("RPC_UNKNOWN_METHOD");
    } finally {
      await app.close();
    }
  });

  it("with --strict, refuses to start on an invalid policy, naming the file and the key", async () => {
    const root = tempApp({
      files: {
        "plugins/p/a.server.mjs": "export const policy = { m: { runtime: { timeoutMs: -5 } } }; export function m() {}",
      },
    });
    await expect(startServer({ root, strict: true })).rejects.toThrow(/a\.server\.mjs: policy\.m\.runtime\.timeoutMs/);
  });

  it("with server.strictStartup, refuses to start when a boot hook exports no register function", async () => {
    const root = tempApp({ files: { "plugins/p/register.server.mjs": "export const nope = 1;" } });
    await expect(startServer({ root, config: { server: { strictStartup: true } } })).rejects.toThrow(/plugin p failed to load: .*register\.server\.mjs: a boot hook must export a function named register/);
  });

  it("with --strict, refuses to start when a server file does not load, naming it", async () => {
    const root = tempApp({ files: { "plugins/p/broken.server.mjs": "export function ( {" } });
    await expect(startServer({ root, strict: true })).rejects.toThrow(/plugin p failed to load: .*broken\.server\.mjs/);
  });

  it("without --strict, a broken plugin answers 503 RPC_TARGET_UNAVAILABLE, is logged and listed, and the others serve", async () => {
    const root = tempApp({
      files: {
        "plugins/broken/a.server.mjs": "export function ( {",
        "plugins/dup/a.server.mjs": "export function same() { return 1; }",
        "plugins/dup/b.server.mjs": "export function same() { return 2; }",
        "plugins/badpolicy/a.server.mjs": "export const policy = { m: { runtime: { timeoutMs: -5 } } }; export function m() {}",
        "modules/hook/register.server.mjs": "export function register(api) { api.registerServerRoute('/hooked', () => {}); throw new Error('boom in register'); }",
        "modules/hook/m.server.mjs": "export const policy = { m: { auth: { public: true } } }; export function m() { return 1; }",
        "plugins/fine/a.server.mjs": "export const policy = { ok: { auth: { public: true } } }; export function ok() { return 'fine'; }",
        "plugins/badjson/server.json": "{ \"providerDefaults\": ",
        "plugins/badjson/a.server.mjs": "export const policy = { m: { auth: { public: true } } }; export function m() { return 1; }",
      },
    });
    const app = await startServer({ root, dev: true });
    try {
      expect((await rpc(app.url, "plugin/fine/ok")).body.result).toBe("fine");
      for (const path of ["plugin/broken/x", "plugin/dup/same", "plugin/badpolicy/m", "plugin/badjson/m", "module/hook/m"]) {
        const answer = await rpc(app.url, path);
        expect([path, answer.status, answer.body.code]).toEqual([path, 503, "RPC_TARGET_UNAVAILABLE"]);
        // Why is for the log, not the caller.
        expect(JSON.stringify(answer.body)).not.toMatch(/server\.mjs|boom/);
      }
      // A failed item's routes are dropped with it.
      expect((await send(app.url, "/hooked")).status).toBe(404);
      const errors = app.logs.lines.filter((line) => line.level === 50 && /failed to load/.test(String(line.msg)));
      // In the order of the start: server.json first, then boot hooks, then server files.
      expect(errors.map((line) => [line.kind, line.id])).toEqual([
        ["plugin", "badjson"],
        ["module", "hook"],
        ["plugin", "badpolicy"],
        ["plugin", "broken"],
        ["plugin", "dup"],
      ]);
      expect(errors.find((line) => line.id === "broken")!.file).toBe(join(root, "plugins/broken/a.server.mjs"));
      expect(String(errors.find((line) => line.id === "hook")!.msg)).toMatch(/register\(\) threw: boom in register/);
      expect(String(errors.find((line) => line.id === "badjson")!.msg)).toContain(`${join(root, "plugins/badjson/server.json")}:1:`);
      const viewer = await openViewer(app.url);
      const status = await rpc(app.url, "server/core/getStatus", { viewer });
      expect(status.body.result.failed.map((item: { id: string }) => item.id)).toEqual(["badjson", "badpolicy", "broken", "dup", "hook"]);
    } finally {
      await app.close();
    }
  });

  it("discovers once at start: an edited file has no effect without dev mode", async () => {
    const root = tempApp({ files: { "plugins/p/a.server.mjs": "export const policy = { v: { auth: { public: true } } }; export function v() { return 1; }" } });
    const app = await startServer({ root, config: {} });
    try {
      expect((await rpc(app.url, "plugin/p/v")).body.result).toBe(1);
      writeFileSync(join(root, "plugins/p/a.server.mjs"), "export const policy = { v: { auth: { public: true } } }; export function v() { return 2; }");
      utimesSync(join(root, "plugins/p/a.server.mjs"), new Date(), new Date(Date.now() + 5000));
      expect((await rpc(app.url, "plugin/p/v")).body.result).toBe(1);
    } finally {
      await app.close();
    }
  });

  it("in dev mode, an edited server file (.mjs or .ts) takes effect on the next call", async () => {
    const root = mkdtempSync(join(tmpdir(), "counterpart-dev-"));
    cpSync(FIXTURE, root, { recursive: true });
    const app = await startServer({ root, dev: true });
    try {
      const viewer = await openViewer(app.url);
      expect((await rpc(app.url, "plugin/matrix/add", { viewer, body: { args: [2, 3] } })).body.result).toEqual({ total: 5 });
      const file = join(root, "plugins/matrix/lib/typed.server.ts");
      writeFileSync(file, "export function add(_ctx: unknown, a: number, b: number): { total: number; edited: boolean } { return { total: a * b, edited: true }; }\nexport function added(): string { return 'new'; }\n");
      utimesSync(file, new Date(), new Date(Date.now() + 5000));
      expect((await rpc(app.url, "plugin/matrix/add", { viewer, body: { args: [2, 3] } })).body.result).toEqual({ total: 6, edited: true });
      expect((await rpc(app.url, "plugin/matrix/added", { viewer })).body.result).toBe("new");
    } finally {
      await app.close();
    }
  });

  it("in dev mode, an edited boot hook file keeps serving only its policy-listed methods, never register", async () => {
    const root = tempApp({
      files: { "modules/m/register.server.mjs": "export function register() {}\nexport const policy = { v: { auth: { public: true } } };\nexport function v() { return 1; }\nexport function helper() { return 'x'; }" },
    });
    const app = await startServer({ root, dev: true });
    try {
      expect((await rpc(app.url, "module/m/v")).body.result).toBe(1);
      const file = join(root, "modules/m/register.server.mjs");
      writeFileSync(file, "export function register() {}\nexport const policy = { v: { auth: { public: true } }, register: { auth: { public: true } } };\nexport function v() { return 2; }\nexport function helper() { return 'x'; }");
      utimesSync(file, new Date(), new Date(Date.now() + 5000));
      expect((await rpc(app.url, "module/m/v")).body.result).toBe(2);
      for (const name of ["register", "helper"]) expect((await rpc(app.url, `module/m/${name}`)).body.code).toBe("RPC_UNKNOWN_METHOD");
    } finally {
      await app.close();
    }
  });
});
