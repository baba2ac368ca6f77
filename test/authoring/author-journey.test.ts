/**
 * The author's first hour, as README "Your own app" and "The author's toolkit" tell it:
 * the package packed as npm would publish it, `counterpart init`, `npm install` of that
 * tarball in the new app (outside this repository, so nothing resolves to the source
 * tree), then the app's own scripts: its tests, `check` (which writes the typed-calls
 * file and compiles the page against it), and the server it starts.
 */
import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openViewer, rpc } from "../helpers/http.js";
import { REPO, startEntrypoint, type RunningProcess } from "../helpers/process.js";

const run = promisify(execFile);
const NPM_ENV = { ...process.env, npm_config_audit: "false", npm_config_fund: "false", npm_config_update_notifier: "false" };

async function npm(args: string[], cwd: string) {
  return run("npm", args, { cwd, env: NPM_ENV, maxBuffer: 16 * 1024 * 1024 });
}

async function counterpart(args: string[], cwd: string): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, [join(cwd, "node_modules", ".bin", "counterpart"), ...args], { cwd });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code: number; stdout: string; stderr: string };
    return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr };
  }
}

describe("a new app from counterpart init, on the packed package", { timeout: 180_000 }, () => {
  const work = mkdtempSync(join(tmpdir(), "counterpart-journey-"));
  const app = join(work, "my-viewer");
  afterAll(() => rmSync(work, { recursive: true, force: true }));

  beforeAll(async () => {
    // dist/ is built by `npm test` before any test runs; packing must not rebuild it under
    // the other test files' feet.
    const packed = await npm(["pack", "--ignore-scripts", "--pack-destination", work], REPO);
    const tarball = join(work, packed.stdout.trim().split("\n").pop()!);
    const init = await run(process.execPath, [join(REPO, "index.js"), "init", app]);
    expect(init.stdout).toContain("npm install");
    // --prefer-offline: CI's `npm ci` has put every package the app needs in npm's cache.
    await npm(["install", "--prefer-offline", tarball], app);
  }, 180_000);

  it("writes a package.json that depends on the server and runs it from its scripts", () => {
    const manifest = JSON.parse(readFileSync(join(app, "package.json"), "utf8"));
    expect(manifest.name).toBe("my-viewer");
    // zod for the hello plugin's `input` schema.
    expect(Object.keys(manifest.dependencies)).toEqual(["@counterpart-viewer/server", "zod"]);
    expect(manifest.scripts.start).toBe("counterpart --root .");
  });

  it("passes its own tests (npm test)", async () => {
    const { stdout } = await npm(["test"], app);
    // TAP (# pass 4) or spec (ℹ pass 4): the default reporter changed in Node 23.
    expect(stdout).toMatch(/^\S+ pass [1-9]\d*$/m);
    expect(stdout).toMatch(/^\S+ fail 0$/m);
  });

  it("serves the page and the plugin's public and session methods", async () => {
    let server: RunningProcess | undefined;
    try {
      server = await startEntrypoint(["--root", app, "--port", "0"], {}, join(app, "node_modules", ".bin", "counterpart"));
      const page = await fetch(server.url);
      expect(await page.text()).toContain("<title>my-viewer</title>");
      expect(await rpc(server.url, "plugin/hello/greet", { body: { args: [{ name: "Ada" }] } })).toMatchObject({
        status: 200,
        body: { result: { message: "Hello, Ada!" } },
      });
      const viewer = await openViewer(server.url);
      expect((await rpc(server.url, "plugin/hello/visit", { viewer })).body).toEqual({ result: { visits: 1 } });
      expect((await rpc(server.url, "plugin/hello/visit", { viewer })).body).toEqual({ result: { visits: 2 } });
      expect((await rpc(server.url, "plugin/hello/visit")).status).toBe(401);
    } finally {
      await server?.stop();
    }
  });

  it("npm run check passes on the scaffold: types written, server files and the page type-check", async () => {
    const { stdout } = await npm(["run", "check"], app);
    expect(stdout).toMatch(/counterpart types: wrote counterpart-env\.d\.ts: 1 plugin, 0 modules, 2 methods/);
    expect(stdout).toContain("checked 1 server file (tsconfig.json): no errors");
  });

  it("a wrong argument in the page's call is a compile error, naming the page's file and line", async () => {
    const page = join(app, "public", "app.js");
    const original = readFileSync(page, "utf8");
    try {
      expect(original).toContain("greet({ name: nameInput.value })");
      writeFileSync(page, original.replace("greet({ name: nameInput.value })", "greet({ nam: nameInput.value })"));
      const failed = await npm(["run", "check"], app).then(
        () => undefined,
        (error: { stdout: string }) => error,
      );
      expect(failed?.stdout).toMatch(/public\/app\.js\(\d+,\d+\): error TS\d+: .*'nam'/);
    } finally {
      writeFileSync(page, original);
    }
  });

  it("check names the file and line of a type error in a server file", async () => {
    const file = join(app, "plugins", "hello", "hello.server.ts");
    const original = readFileSync(file, "utf8");
    try {
      writeFileSync(file, original.replace("return { visits };", 'return { visits: "many" };'));
      const failed = await counterpart(["check"], app);
      expect(failed.code).toBe(1);
      expect(failed.stdout).toMatch(/plugins\/hello\/hello\.server\.ts\(\d+,\d+\): error TS2322/);
      expect(failed.stdout).toContain("1 error");
    } finally {
      writeFileSync(file, original);
    }
  });
});
