// docs/guides/your-app.md: the real `node index.js` process — ready line, flags and their
// environment twins, each start-up failure as one clear line and a non-zero exit, SIGTERM.
// (Its log lines: test/log; a bad config: test/config; the session secret: test/auth.)
import { afterAll, describe, expect, it } from "vitest";
import { chmodSync, readFileSync, statSync } from "node:fs";
import { execFile, spawn } from "node:child_process";
import { createServer as createNetServer } from "node:net";
import { join } from "node:path";
import { TEST_SESSION_SECRET } from "../helpers/server.js";
import { REPO, expectStartupFailure, runToExit, startEntrypoint, type RunningProcess } from "../helpers/process.js";
import { tempApp } from "../helpers/app-root.js";
import { waitFor } from "../helpers/wait.js";

const running: RunningProcess[] = [];
afterAll(async () => {
  await Promise.all(running.map((run) => run.stop("SIGKILL")));
});

describe("node index.js", () => {
  it("prints one ready line with its URL, serves the demo by default, and exits 0 on SIGTERM", async () => {
    const run = await startEntrypoint(["--port", "0"], { APP_SESSION_SECRET: TEST_SESSION_SECRET });
    running.push(run);
    const ready = run.stdout().split("\n").filter((line) => line.includes("listening on"));
    expect(ready).toHaveLength(1);
    // The one line that names the URL: no second "Server listening at" from the framework.
    expect(run.stdout().split("\n").filter((line) => line.includes(run.url))).toHaveLength(1);
    expect(JSON.parse(ready[0]!)).toMatchObject({ level: 30, url: run.url });
    const page = await fetch(run.url + "/");
    expect(await page.text()).toContain("Counterpart demo viewer");
    expect(await run.stop("SIGTERM")).toBe(0);
  });

  it("under npm (npx counterpart, npm start), stops as on SIGTERM when npm's shell dies of a SIGTERM it does not pass on", async () => {
    // What npm runs: sh -c '<command>', with npm_command set. `; :` keeps the shell from
    // replacing itself with node, as npm's shell does not either.
    const shell = spawn("sh", ["-c", `"${process.execPath}" index.js --port 0 --root "${tempApp()}"; :`], {
      cwd: REPO,
      env: { PATH: process.env.PATH ?? "", npm_command: "exec", APP_SESSION_SECRET: TEST_SESSION_SECRET },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    shell.stdout!.on("data", (chunk: Buffer) => (out += chunk.toString("utf8")));
    // The pipe closes once the last process holding it, the server, has ended.
    const closed = new Promise<void>((resolve) => shell.stdout!.on("close", () => resolve()));
    const pid = await waitFor(() => /"pid":(\d+).*listening on/.exec(out)?.[1], 15_000, "the ready line");
    try {
      shell.kill("SIGTERM");
      await waitFor(() => out.includes('"msg":"stopped"'), 5_000, "the server to stop");
      expect(out).toContain("the npm process that started the server has ended");
      await closed;
    } finally {
      try {
        process.kill(Number(pid), "SIGKILL");
      } catch {
        // ended, as it should
      }
    }
  });

  it("with --dev, prints the dev console's URL after the ready line (and never without --dev)", async () => {
    const root = tempApp();
    const run = await startEntrypoint(["--port", "0", "--root", root, "--dev"], { APP_SESSION_SECRET: TEST_SESSION_SECRET });
    running.push(run);
    const consoleUrl = `${run.url}/__app/dev`;
    await waitFor(() => run.stdout().includes(`dev console at ${consoleUrl}`), 5_000, "the dev console line");
    const page = await fetch(consoleUrl);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain("window.APP_CSRF_TOKEN");
    await run.stop();
    const plain = await startEntrypoint(["--port", "0", "--root", root], { APP_SESSION_SECRET: TEST_SESSION_SECRET });
    running.push(plain);
    expect((await fetch(`${plain.url}/health`)).status).toBe(200);
    expect(plain.stdout()).not.toContain("dev console");
    await plain.stop();
  });

  it("takes --host/--port/--root from APP_HOST/APP_PORT/APP_ROOT, flags winning", async () => {
    const root = tempApp();
    const run = await startEntrypoint(["--port", "0"], { APP_ROOT: root, APP_PORT: "1", APP_HOST: "127.0.0.1", APP_SESSION_SECRET: TEST_SESSION_SECRET });
    running.push(run);
    expect(run.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(await (await fetch(run.url + "/")).text()).toContain("<body>x</body>");
    await run.stop();
  });

  // A bad config: test/config/startup-errors.test.ts; a short session secret: test/auth/session.test.ts.
  const failures: Array<[string, () => { args: string[]; env?: Record<string, string> }, RegExp]> = [
    ["an app root that does not exist", () => ({ args: ["--root", "/nonexistent/counterpart-root"] }), /cannot read app root \/nonexistent\/counterpart-root/],
    ["a bad port", () => ({ args: ["--port", "eighty"] }), /--port must be a port number/],
    ["an unknown flag", () => ({ args: ["--prot", "80"] }), /prot/],
  ];
  for (const [name, setup, message] of failures) {
    it(`exits non-zero with one clear line for ${name}`, async () => {
      const { args, env } = setup();
      await expectStartupFailure(message, args, env);
    });
  }

  it("exits non-zero with one clear line for an unreadable root", async () => {
    if (process.getuid?.() === 0) {
      // root reads everything; a file in place of the root directory is unreadable as a root.
      const file = join(tempApp(), "public/index.html");
      const result = await runToExit(["--root", file, "--port", "0"]);
      expect(result.code).toBe(1);
      expect(result.stderr).toMatch(/app root .* is not a directory/);
      return;
    }
    const root = tempApp();
    chmodSync(root, 0o000);
    const result = await runToExit(["--root", root, "--port", "0"]);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/cannot read app root/);
  });

  it("exits non-zero with one clear line when the port is in use", async () => {
    const blocker = createNetServer();
    await new Promise<void>((resolve) => blocker.listen(0, "127.0.0.1", resolve));
    const port = (blocker.address() as { port: number }).port;
    try {
      const result = await runToExit(["--port", String(port), "--root", tempApp()]);
      expect(result.code).toBe(1);
      expect(result.stderr.trim()).toBe(`counterpart: port ${port} on 127.0.0.1 is already in use`);
    } finally {
      blocker.close();
    }
  });
});

const version = (JSON.parse(readFileSync(join(REPO, "package.json"), "utf8")) as { version: string }).version;

describe("--version", () => {
  // A root that does not exist and a bad APP_PORT: had either entrypoint tried to start,
  // it would have failed on them with exit 1 instead of printing the version.
  const cannotStart = { args: ["--version", "--root", "/nonexistent/counterpart-root"], env: { APP_PORT: "not-a-port", APP_WORKERS: "2" } };

  for (const entry of ["index.js", "cluster-index.js"]) {
    it(`node ${entry} --version prints the package version and exits 0 without starting`, async () => {
      const run = await runToExit(cannotStart.args, cannotStart.env, 15_000, entry);
      expect([run.code, run.stdout, run.stderr]).toEqual([0, `${version}\n`, ""]);
    });
  }
});

describe("the package bin", () => {
  for (const entry of ["index.js", "cluster-index.js"]) {
    it(`${entry} is executable and starts with a node shebang`, () => {
      expect(readFileSync(join(REPO, entry), "utf8").split("\n")[0]).toBe("#!/usr/bin/env node");
      // Owner, group and others may all run it: npm links the bin as it is.
      expect((statSync(join(REPO, entry)).mode & 0o111).toString(8)).toBe("111");
    });
  }

  it("runs as a program of its own: ./index.js --version", async () => {
    // Executed directly, not through `node`: the kernel needs both the run bit and the shebang.
    const stdout = await new Promise<string>((resolve, reject) =>
      execFile(join(REPO, "index.js"), ["--version"], { cwd: REPO }, (error, out) => (error ? reject(error) : resolve(out))),
    );
    expect(stdout).toBe(`${version}\n`);
  });
});
