// README "Your own app": the real `node index.js` process — ready line, flags and their
// environment twins, each start-up failure as one clear line and a non-zero exit, SIGTERM.
import { afterAll, describe, expect, it } from "vitest";
import { mkdtempSync, mkdirSync, writeFileSync, chmodSync, readFileSync, statSync } from "node:fs";
import { execFile } from "node:child_process";
import { createServer as createNetServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { REPO, runToExit, spawnEntrypoint, startEntrypoint, type RunningProcess } from "../helpers/process.js";
import { TEST_SESSION_SECRET } from "../helpers/server.js";

function appRoot(config?: unknown): string {
  const root = mkdtempSync(join(tmpdir(), "counterpart-root-"));
  mkdirSync(join(root, "public"));
  writeFileSync(join(root, "public/index.html"), "<html><head></head><body>x</body></html>");
  if (config !== undefined) writeFileSync(join(root, "app.config.json"), typeof config === "string" ? config : JSON.stringify(config));
  return root;
}

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

  it("writes a call's log line to stdout promptly even on a quiet server (log lines are batched)", async () => {
    const run = await startEntrypoint(["--port", "0", "--root", appRoot()], { APP_SESSION_SECRET: TEST_SESSION_SECRET });
    running.push(run);
    const answer = await fetch(run.url + "/__rpc/plugin/nobody/here", { method: "POST" });
    expect(answer.status).toBe(404);
    const deadline = Date.now() + 3000;
    while (!run.stdout().includes('"event":"rpc.rejected"') && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
    const event = run.stdout().split("\n").find((line) => line.includes('"event":"rpc.rejected"'));
    expect(JSON.parse(event!)).toMatchObject({ code: "RPC_UNKNOWN_TARGET", status: 404 });
    await run.stop();
  });

  it("writes every line logged before SIGTERM, however many are still batched", async () => {
    const run = await startEntrypoint(["--port", "0", "--root", appRoot()], { APP_SESSION_SECRET: TEST_SESSION_SECRET });
    running.push(run);
    // ~300 lines: several batches, the last of them still waiting when the signal comes.
    for (let round = 0; round < 10; round += 1) {
      await Promise.all(Array.from({ length: 30 }, () => fetch(run.url + "/__rpc/plugin/nobody/here", { method: "POST" }).then((r) => r.arrayBuffer())));
    }
    expect(await run.stop("SIGTERM")).toBe(0);
    const lines = run.stdout().split("\n");
    expect(lines.filter((line) => line.includes('"event":"rpc.rejected"'))).toHaveLength(300);
    expect(JSON.parse(lines.filter((line) => line.trim() !== "").at(-1)!)).toMatchObject({ msg: "stopped" });
  });

  it("takes --host/--port/--root from APP_HOST/APP_PORT/APP_ROOT, flags winning", async () => {
    const root = appRoot();
    const run = await startEntrypoint(["--port", "0"], { APP_ROOT: root, APP_PORT: "1", APP_HOST: "127.0.0.1", APP_SESSION_SECRET: TEST_SESSION_SECRET });
    running.push(run);
    expect(run.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(await (await fetch(run.url + "/")).text()).toContain("<body>x</body>");
    await run.stop();
  });

  it("warns when APP_SESSION_SECRET is unset", async () => {
    const run = await startEntrypoint(["--port", "0", "--root", appRoot()]);
    running.push(run);
    expect(run.stdout()).toContain("APP_SESSION_SECRET is not set");
    await run.stop();
  });

  const failures: Array<[string, () => { args: string[]; env?: Record<string, string> }, RegExp]> = [
    ["a config value of the wrong type, naming the key path", () => ({ args: ["--root", appRoot({ server: { rpc: { timeoutMs: "fast" } } })] }), /server\.rpc\.timeoutMs/],
    ["an unknown config key, naming it", () => ({ args: ["--root", appRoot({ server: { sesion: {} } })] }), /sesion/],
    ["a config file that is not JSON", () => ({ args: ["--root", appRoot("{ nope")] }), /not valid JSON/],
    [
      "an unset referenced secret variable, naming the key and the variable",
      () => ({ args: ["--root", appRoot({ plugins: { x: { apiKey: "<% COUNTERPART_TEST_UNSET_KEY %>" } } })] }),
      /plugins\.x\.apiKey.*COUNTERPART_TEST_UNSET_KEY/,
    ],
    [
      "an empty referenced variable",
      () => ({ args: ["--root", appRoot({ plugins: { x: { apiKey: "<% COUNTERPART_TEST_EMPTY_KEY %>" } } })], env: { COUNTERPART_TEST_EMPTY_KEY: "" } }),
      /plugins\.x\.apiKey.*COUNTERPART_TEST_EMPTY_KEY, which is empty/,
    ],
    ["an app root that does not exist", () => ({ args: ["--root", "/nonexistent/counterpart-root"] }), /cannot read app root \/nonexistent\/counterpart-root/],
    ["a config file that does not exist", () => ({ args: ["--root", appRoot(), "--config", "/nonexistent/app.config.json"] }), /\/nonexistent\/app\.config\.json/],
    ["a bad port", () => ({ args: ["--port", "eighty"] }), /--port must be a port number/],
    ["an unknown flag", () => ({ args: ["--prot", "80"] }), /prot/],
    ["a session secret shorter than 32 bytes", () => ({ args: ["--root", appRoot()], env: { APP_SESSION_SECRET: "short" } }), /APP_SESSION_SECRET must be at least 32 bytes/],
  ];
  for (const [name, setup, message] of failures) {
    it(`exits non-zero with one clear line for ${name}`, async () => {
      const { args, env } = setup();
      const result = await runToExit(args.includes("--port") ? args : [...args, "--port", "0"], env);
      expect(result.code).toBe(1);
      const lines = result.stderr.trim().split("\n");
      expect(lines[0]).toMatch(message);
      expect(lines[0]).toMatch(/^counterpart: /);
      expect(result.stderr).not.toMatch(/\n\s+at /);
      expect(result.stdout).not.toContain("listening on");
    });
  }

  it("exits non-zero with one clear line for an unreadable root", async () => {
    if (process.getuid?.() === 0) {
      // root reads everything; a file in place of the root directory is unreadable as a root.
      const file = join(appRoot(), "public/index.html");
      const result = await runToExit(["--root", file, "--port", "0"]);
      expect(result.code).toBe(1);
      expect(result.stderr).toMatch(/app root .* is not a directory/);
      return;
    }
    const root = appRoot();
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
      const result = await runToExit(["--port", String(port), "--root", appRoot()]);
      expect(result.code).toBe(1);
      expect(result.stderr.trim()).toBe(`counterpart: port ${port} on 127.0.0.1 is already in use`);
    } finally {
      blocker.close();
    }
  });
});

describe("sessions across processes", () => {
  it("a session issued by one process is accepted by a second one with the same secret, not by one with another", async () => {
    const root = join(import.meta.dirname, "../fixtures/gateway-app");
    const first = await startEntrypoint(["--port", "0", "--root", root], { APP_SESSION_SECRET: TEST_SESSION_SECRET });
    const second = await startEntrypoint(["--port", "0", "--root", root], { APP_SESSION_SECRET: TEST_SESSION_SECRET });
    const other = await startEntrypoint(["--port", "0", "--root", root], { APP_SESSION_SECRET: "a-completely-different-secret-of-32-bytes" });
    running.push(first, second, other);

    const page = await fetch(first.url + "/");
    const cookie = page.headers.get("set-cookie")!.split(";")[0]!;
    const csrf = /APP_CSRF_TOKEN = "([^"]+)"/.exec(await page.text())![1]!;
    const call = (url: string) =>
      fetch(url + "/__rpc/plugin/matrix/sessionOnly", {
        method: "POST",
        headers: { cookie, "x-app-csrf": csrf, "content-type": "application/json" },
        body: "{}",
      });
    const accepted = await call(second.url);
    expect(accepted.status).toBe(200);
    const refused = await call(other.url);
    expect(refused.status).toBe(401);
    expect(((await refused.json()) as { code: string }).code).toBe("RPC_NO_SESSION");
  });
});

const version = (JSON.parse(readFileSync(join(REPO, "package.json"), "utf8")) as { version: string }).version;

describe("--version", () => {
  // A root that does not exist and a bad APP_PORT: had either entrypoint tried to start,
  // it would have failed on them with exit 1 instead of printing the version.
  const cannotStart = { args: ["--version", "--root", "/nonexistent/counterpart-root"], env: { APP_PORT: "not-a-port", APP_WORKERS: "2" } };

  for (const entry of ["index.js", "cluster-index.js"]) {
    it(`node ${entry} --version prints the package version and exits 0 without starting`, async () => {
      const run = spawnEntrypoint(cannotStart.args, cannotStart.env, entry);
      const timer = setTimeout(() => run.child.kill("SIGKILL"), 15_000);
      const code = await run.exited;
      clearTimeout(timer);
      expect([code, run.stdout(), run.stderr()]).toEqual([0, `${version}\n`, ""]);
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
