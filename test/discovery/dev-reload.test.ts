// docs/guides/server-methods.md "Dev mode": what an edit reloads without a restart — a helper a server file imports
// (through any chain, .js, .ts and CommonJS alike, in isolation workers too), new server
// files and new plugins or modules — and what it keeps: a file that fails keeps its previous
// version, and what new code imports is never served. Each test edits a temporary app root
// and calls the method over real HTTP. Writes move the mtime ahead by hand, so that an edit
// within the file system's mtime granularity still counts.
import { describe, expect, it } from "vitest";
import { mkdirSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { startServer, type TestServer } from "../helpers/server.js";
import { rpc, send } from "../helpers/http.js";
import { tempApp } from "../helpers/app-root.js";

const PUBLIC = (names: string[], extra = "") => `export const policy = { ${names.map((name) => `${name}: { auth: { public: true }${extra} }`).join(", ")} };`;

let tick = 0;
/** Writes `content` with an mtime no earlier write had. */
function edit(root: string, path: string, content: string): void {
  const file = join(root, path);
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, content);
  tick += 1;
  const later = new Date(Date.now() + tick * 10_000);
  utimesSync(file, later, later);
}

async function call(app: TestServer, path: string): Promise<{ status: number; body: any }> {
  const { status, body } = await rpc(app.url, path);
  return { status, body };
}

async function withServer(root: string, dev: boolean, run: (app: TestServer) => Promise<void>): Promise<void> {
  const app = await startServer({ root, dev, config: {} });
  try {
    await run(app);
  } finally {
    await app.close();
  }
}

describe("dev mode: a rate limit", () => {
  it("holds for a method whose file changed while the server runs, and for a new item's", async () => {
    const limited = (name: string) => `export const policy = { ${name}: { auth: { public: true }, runtime: { rateLimit: { points: 1, durationMs: 60000, key: "global" } } } };
      export function ${name}() { return "ok"; }`;
    const root = tempApp({ files: { "plugins/p/p.server.mjs": `${PUBLIC(["once"])} export function once() { return "free"; }` } });
    await withServer(root, true, async (app) => {
      expect((await call(app, "plugin/p/once")).status).toBe(200);
      edit(root, "plugins/p/p.server.mjs", limited("once"));
      edit(root, "plugins/q/q.server.mjs", limited("twice"));
      for (const path of ["plugin/p/once", "plugin/q/twice"]) {
        expect((await call(app, path)).status).toBe(200);
        const refused = await call(app, path);
        expect([refused.status, refused.body.code]).toEqual([429, "RPC_RATE_LIMITED"]);
      }
    });
  });
});

describe("dev mode: an edited helper", () => {
  it("reloads every server file that imports it, in any item and through a chain, with one fresh instance of it", async () => {
    const root = tempApp({
      files: {
        "shared/words.mjs": 'export const instance = Math.random(); export const word = () => "one";',
        "shared/counter.mjs": "let count = 0; export const next = () => ++count;",
        // p imports the helper through a middle file; q (TypeScript) imports it directly.
        "plugins/p/middle.mjs": 'export { word, instance } from "../../shared/words.mjs";',
        "plugins/p/p.server.mjs": `${PUBLIC(["say", "count"])} import { word, instance } from "./middle.mjs"; import { next } from "../../shared/counter.mjs";
          export function say() { return { word: word(), instance }; } export function count() { return next(); }`,
        "plugins/q/q.server.ts": `${PUBLIC(["say"])} import { word, instance } from "../../shared/words.mjs";
          export function say(): { word: string; instance: number } { return { word: word(), instance }; }`,
      },
    });
    await withServer(root, true, async (app) => {
      const before = (await call(app, "plugin/p/say")).body.result;
      expect(before.word).toBe("one");
      expect((await call(app, "plugin/p/count")).body.result).toBe(1);
      edit(root, "shared/words.mjs", 'export const instance = Math.random(); export const word = () => "two";');
      const p = (await call(app, "plugin/p/say")).body.result;
      const q = (await call(app, "plugin/q/say")).body.result;
      expect([p.word, q.word]).toEqual(["two", "two"]);
      // One new instance, shared by both importers, and not the old one.
      expect(p.instance).toBe(q.instance);
      expect(p.instance).not.toBe(before.instance);
      // The helper nobody edited kept its state through p's reload.
      expect((await call(app, "plugin/p/count")).body.result).toBe(2);
      const reloaded = app.logs.lines.filter((line) => line.msg === "server file reloaded").map((line) => line.file);
      expect(reloaded.sort()).toEqual([join(root, "plugins/p/p.server.mjs"), join(root, "plugins/q/q.server.ts")]);
    });
  });

  it("reloads a CommonJS server file and the helper it requires", async () => {
    const root = tempApp({
      files: {
        "plugins/c/package.json": "{}",
        "plugins/c/c.server.js": `const helper = require("./helper.js"); exports.policy = { v: { auth: { public: true } } }; exports.v = () => helper.value;`,
        "plugins/c/helper.js": 'exports.value = "first";',
      },
    });
    await withServer(root, true, async (app) => {
      expect((await call(app, "plugin/c/v")).body.result).toBe("first");
      edit(root, "plugins/c/helper.js", 'exports.value = "second";');
      expect((await call(app, "plugin/c/v")).body.result).toBe("second");
    });
  });

  it("reaches an isolated method's worker, and importServerModule", async () => {
    const root = tempApp({
      files: {
        "plugins/iso/helper.mjs": 'export const value = "first";',
        "plugins/iso/iso.server.mjs": `${PUBLIC(["inWorker"], ', runtime: { isolation: "worker" }')} import { value } from "./helper.mjs"; export function inWorker() { return value; }`,
        "plugins/iso/other.server.mjs": 'import { value } from "./helper.mjs"; export const policy = {}; export function read() { return value; }',
        "plugins/iso/caller.server.mjs": `${PUBLIC(["viaImport"])} export async function viaImport(ctx) { return (await APP_SERVER.importServerModule(ctx, "./other")).read(); }`,
      },
    });
    await withServer(root, true, async (app) => {
      expect((await call(app, "plugin/iso/inWorker")).body.result).toBe("first");
      expect((await call(app, "plugin/iso/viaImport")).body.result).toBe("first");
      edit(root, "plugins/iso/helper.mjs", 'export const value = "second";');
      expect((await call(app, "plugin/iso/inWorker")).body.result).toBe("second");
      expect((await call(app, "plugin/iso/viaImport")).body.result).toBe("second");
    });
  });

  it("reloads a JSON file a .ts server file imports; a deleted server file keeps its methods and its item's assets stay served", async () => {
    const root = tempApp({
      files: {
        "plugins/j/data.json": '{ "v": 1 }',
        "plugins/j/j.server.ts": `${PUBLIC(["v"])} import data from "./data.json"; export function v(): number { return data.v; }`,
        "plugins/j/gone.server.mjs": `${PUBLIC(["gone"])} export function gone() { return "still here"; }`,
        "plugins/j/asset.js": "console.log('for the browser');",
      },
    });
    await withServer(root, true, async (app) => {
      expect((await call(app, "plugin/j/v")).body.result).toBe(1);
      edit(root, "plugins/j/data.json", '{ "v": 2 }');
      rmSync(join(root, "plugins/j/gone.server.mjs"));
      expect((await call(app, "plugin/j/v")).body.result).toBe(2);
      expect((await call(app, "plugin/j/gone")).body.result).toBe("still here");
      expect(app.logs.lines.filter((line) => String(line.msg).endsWith("was deleted: its methods stay until a restart"))).toHaveLength(1);
      expect((await send(app.url, "/plugins/j/asset.js")).status).toBe(200);
    });
  });

  it("that breaks keeps the previous version, logs the helper's file and line, and loads once fixed", async () => {
    const root = tempApp({
      files: {
        "plugins/p/helper.mjs": 'export const value = "first";',
        "plugins/p/p.server.mjs": `${PUBLIC(["v"])} import { value } from "./helper.mjs"; export function v() { return value; }`,
      },
    });
    await withServer(root, true, async (app) => {
      expect((await call(app, "plugin/p/v")).body.result).toBe("first");
      edit(root, "plugins/p/helper.mjs", 'export const value = "second";\nexport const broken = ;\n');
      expect((await call(app, "plugin/p/v")).body.result).toBe("first");
      const failure = app.logs.lines.find((line) => line.level === 50 && String(line.msg).startsWith("server file failed to load"));
      expect(failure).toMatchObject({ file: join(root, "plugins/p/p.server.mjs") });
      expect(String(failure!.msg)).toContain(`${join(root, "plugins/p/helper.mjs")}:2:`);
      expect(String(failure!.msg)).toContain("SyntaxError");
      expect(String(failure!.msg)).toContain("export const broken = ;");
      edit(root, "plugins/p/helper.mjs", 'export const value = "third";');
      expect((await call(app, "plugin/p/v")).body.result).toBe("third");
    });
  });

  it("that starts importing another file gets that file refused before it loads", async () => {
    const root = tempApp({
      files: {
        "plugins/p/helper.mjs": 'export const value = "first";',
        "plugins/p/later.mjs": 'export const later = "later";',
        "plugins/p/p.server.mjs": `${PUBLIC(["v"])} import { value } from "./helper.mjs"; export function v() { return value; }`,
      },
    });
    await withServer(root, true, async (app) => {
      expect((await send(app.url, "/plugins/p/later.mjs")).status).toBe(200);
      edit(root, "plugins/p/helper.mjs", 'export { later as value } from "./later.mjs";');
      expect((await call(app, "plugin/p/v")).body.result).toBe("later");
      expect((await send(app.url, "/plugins/p/later.mjs")).status).toBe(404);
    });
  });
});

describe("dev mode: new server files and items", () => {
  it("a new server file in a running item is callable without a restart, and what it imports is not served", async () => {
    const root = tempApp({ files: { "plugins/p/p.server.mjs": `${PUBLIC(["old"])} export function old() { return "old"; }` } });
    await withServer(root, true, async (app) => {
      expect((await call(app, "plugin/p/fresh")).body.code).toBe("RPC_UNKNOWN_METHOD");
      edit(root, "plugins/p/lib/secret.ts", 'export const secret = "from a helper";');
      edit(root, "plugins/p/fresh.server.ts", `${PUBLIC(["fresh"])} import { secret } from "./lib/secret"; export function fresh(): string { return secret; }`);
      expect((await call(app, "plugin/p/fresh")).body.result).toBe("from a helper");
      expect((await call(app, "plugin/p/old")).body.result).toBe("old");
      expect((await send(app.url, "/plugins/p/fresh.server.ts")).status).toBe(404);
      expect((await send(app.url, "/plugins/p/lib/secret.ts")).status).toBe(404);
    });
  });

  it("a new server file that does not load logs why, and is loaded once fixed", async () => {
    const root = tempApp({ files: { "plugins/p/p.server.mjs": `${PUBLIC(["old"])} export function old() { return "old"; }` } });
    await withServer(root, true, async (app) => {
      edit(root, "plugins/p/fresh.server.mjs", `${PUBLIC(["fresh"])}\nexport function fresh() { return 1 +; }\n`);
      expect((await call(app, "plugin/p/fresh")).body.code).toBe("RPC_UNKNOWN_METHOD");
      const failure = app.logs.lines.find((line) => line.level === 50 && String(line.msg).startsWith("server file failed to load"));
      expect(String(failure?.msg)).toContain(`${join(root, "plugins/p/fresh.server.mjs")}:2:`);
      expect((await call(app, "plugin/p/old")).body.result).toBe("old");
      edit(root, "plugins/p/fresh.server.mjs", `${PUBLIC(["fresh"])}\nexport function fresh() { return 2; }\n`);
      expect((await call(app, "plugin/p/fresh")).body.result).toBe(2);
    });
  });

  it("a new plugin or module is callable without a restart, with its config section; one with a boot hook answers 503 and the log says to restart", async () => {
    const root = tempApp({ files: { "plugins/p/p.server.mjs": `${PUBLIC(["old"])} export function old() { return "old"; }` } });
    const app = await startServer({ root, dev: true, config: { modules: { fresh: { greeting: "hello" } } } });
    try {
      expect((await call(app, "module/fresh/hi")).body.code).toBe("RPC_UNKNOWN_TARGET");
      edit(root, "modules/fresh/fresh.server.mjs", `${PUBLIC(["hi"])} export function hi(ctx) { return ctx.config.greeting; }`);
      expect((await call(app, "module/fresh/hi")).body.result).toBe("hello");
      expect((await send(app.url, "/modules/fresh/fresh.server.mjs")).status).toBe(404);

      edit(root, "plugins/hooked/register.server.mjs", "export function register() {}");
      edit(root, "plugins/hooked/h.server.mjs", `${PUBLIC(["h"])} export function h() { return 1; }`);
      const hooked = await call(app, "plugin/hooked/h");
      expect([hooked.status, hooked.body.code]).toEqual([503, "RPC_TARGET_UNAVAILABLE"]);
      expect(app.logs.lines.some((line) => line.level === 40 && line.id === "hooked" && /boot hook.*restart the server/.test(String(line.msg)))).toBe(true);
    } finally {
      await app.close();
    }
  });

  it("outside dev mode, discovery happens once: a new server file or item stays unknown", async () => {
    const root = tempApp({ files: { "plugins/p/p.server.mjs": `${PUBLIC(["old"])} export function old() { return "old"; }` } });
    await withServer(root, false, async (app) => {
      edit(root, "plugins/p/fresh.server.mjs", `${PUBLIC(["fresh"])} export function fresh() { return 1; }`);
      edit(root, "plugins/other/o.server.mjs", `${PUBLIC(["o"])} export function o() { return 1; }`);
      expect((await call(app, "plugin/p/fresh")).body.code).toBe("RPC_UNKNOWN_METHOD");
      expect((await call(app, "plugin/other/o")).body.code).toBe("RPC_UNKNOWN_TARGET");
    });
  });
});
