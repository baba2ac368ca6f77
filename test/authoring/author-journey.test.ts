/**
 * The author's first hour, as README "Your first plugin in five minutes" tells it (and
 * docs/guides/your-app.md, docs/guides/toolkit.md): the package packed as `npm pack` makes
 * it, then the README's own two lines, read from the README and run as written in the folder that holds the tarball (outside this repository,
 * so nothing resolves to the source tree): `npx --package=<tgz> counterpart init`, then
 * `cd`, `npm install` and `npm start`. Then the app's own scripts: its tests, `check`
 * (which writes the typed-calls file and compiles the page against it), and its server;
 * and the code the README shows is the code the app got, so that the two cannot differ.
 */
import { execFile, spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openViewer, rpc } from "../helpers/http.js";
import { docSection } from "../helpers/docs.js";
import { REPO } from "../helpers/process.js";
import { waitFor } from "../helpers/wait.js";

const run = promisify(execFile);
// --prefer-offline: CI's `npm ci` has put every package the app needs in npm's cache.
const NPM_ENV = { ...process.env, npm_config_audit: "false", npm_config_fund: "false", npm_config_update_notifier: "false", npm_config_prefer_offline: "true" };

async function npm(args: string[], cwd: string) {
  return run("npm", args, { cwd, env: NPM_ENV, maxBuffer: 16 * 1024 * 1024 });
}

/** One README line, as a user's shell runs it. */
async function shell(line: string, cwd: string) {
  return run("sh", ["-c", line], { cwd, env: NPM_ENV, maxBuffer: 16 * 1024 * 1024 });
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

const firstPlugin = docSection("README.md", "## Your first plugin in five minutes");
const [initLine, startLine] = /```sh\n(npx [^\n]*)\n([^\n]*)\n```/.exec(firstPlugin)!.slice(1) as [string, string];
/** The README section's code blocks of one language. */
const blocks = (lang: string) => [...firstPlugin.matchAll(new RegExp("```" + lang + "\\n([\\s\\S]*?)```", "g"))].map((match) => match[1]!);

describe("a new app from counterpart init, on the packed package, as the README says", { timeout: 180_000 }, () => {
  const work = mkdtempSync(join(tmpdir(), "counterpart-journey-"));
  const app = join(work, "my-viewer-app");
  let initOutput = "";
  afterAll(() => rmSync(work, { recursive: true, force: true }));

  beforeAll(async () => {
    // dist/ is built by `npm test` before any test runs; packing must not rebuild it under
    // the other test files' feet.
    const packed = await npm(["pack", "--ignore-scripts", "--pack-destination", work], REPO);
    expect(initLine).toContain(`--package=./${packed.stdout.trim().split("\n").pop()!}`);
    initOutput = (await shell(initLine, work)).stdout;
    const [cd, install, start] = startLine.split(" && ");
    expect([cd, install, start]).toEqual(["cd my-viewer-app", "npm install", "npm start"]);
    await shell(`${cd} && ${install}`, work);
  }, 180_000);

  it("writes a package.json that depends on the tarball it ran from, says so, and runs it from its scripts", () => {
    const manifest = JSON.parse(readFileSync(join(app, "package.json"), "utf8"));
    expect(manifest.name).toBe("my-viewer-app");
    // Not on the registry: "^0.1.0" would answer 404 at npm install. zod for the hello plugin's `input` schema.
    expect(manifest.dependencies).toEqual({ "@counterpart-viewer/server": "file:../counterpart-viewer-server-0.1.0.tgz", zod: "^4.6.7" });
    expect(initOutput).toContain(`package.json depends on "@counterpart-viewer/server": "file:../counterpart-viewer-server-0.1.0.tgz" (${join(work, "counterpart-viewer-server-0.1.0.tgz")})`);
    expect(manifest.scripts.start).toBe("counterpart --root .");
  });
  it("got the code the README shows: the method file whole, the page's calls and the tests", () => {
    const [method] = blocks("ts");
    expect(method).toBeDefined();
    expect(method!.startsWith("// plugins/hello/hello.server.ts\n")).toBe(true);
    expect(readFileSync(join(app, "plugins", "hello", "hello.server.ts"), "utf8")).toBe(method!.slice(method!.indexOf("\n") + 1));
    const page = readFileSync(join(app, "public", "app.js"), "utf8");
    const tests = readFileSync(join(app, "test", "hello.test.mjs"), "utf8");
    const [calls, shownTests] = blocks("js");
    const shownCalls = [...calls!.matchAll(/window\.xserver\.plugin\.hello\.\w+\([^)]*\)/g)].map((match) => match[0]);
    expect(shownCalls).toHaveLength(2);
    for (const call of shownCalls) expect(page).toContain(call);
    for (const shown of shownTests!.split("\n\n")) expect(tests).toContain(shown.trim());
  });

  it("passes its own tests (npm test)", async () => {
    const { stdout } = await npm(["test"], app);
    // TAP (# pass 4) or spec (ℹ pass 4): the default reporter changed in Node 23.
    expect(stdout).toMatch(/^\S+ pass [1-9]\d*$/m);
    expect(stdout).toMatch(/^\S+ fail 0$/m);
  });

  it("npm start serves the page and the plugin's public and session methods, and stops when npm is sent SIGTERM", async () => {
    // `npm start` as the README says, on a free port; its own process group, so that the
    // test can end whatever is left of it if the server does not stop.
    const started = spawn("npm", ["start"], { cwd: app, env: { ...NPM_ENV, APP_PORT: "0" }, detached: true, stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    started.stdout!.on("data", (chunk: Buffer) => (out += chunk.toString("utf8")));
    try {
      await waitFor(() => /listening on http:\/\//.test(out), 30_000);
      const url = /listening on (http:\/\/[^\s"]+)/.exec(out)![1]!;
      const page = await fetch(url);
      expect(await page.text()).toContain("<title>my-viewer-app</title>");
      expect(await rpc(url, "plugin/hello/greet", { body: { args: [{ name: "Ada" }] } })).toMatchObject({
        status: 200,
        body: { result: { message: "Hello, Ada!" } },
      });
      const viewer = await openViewer(url);
      expect((await rpc(url, "plugin/hello/visit", { viewer })).body).toEqual({ result: { visits: 1 } });
      expect((await rpc(url, "plugin/hello/visit", { viewer })).body).toEqual({ result: { visits: 2 } });
      expect((await rpc(url, "plugin/hello/visit")).status).toBe(401);
      // A SIGTERM to npm alone (a process manager's stop) ends the server too, although
      // npm's shell does not pass it on.
      started.kill("SIGTERM");
      await waitFor(() => out.includes('"msg":"stopped"'), 10_000, "the server to stop");
    } finally {
      try {
        process.kill(-started.pid!, "SIGKILL");
      } catch {
        // every process of the group has ended
      }
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
