// docs/reference/log-events.md: what `node index.js` writes to stdout — JSON lines, batched yet prompt,
// none lost at SIGTERM — and readable lines instead of JSON in dev mode.
import { afterAll, describe, expect, it } from "vitest";
import { TEST_SESSION_SECRET } from "../helpers/server.js";
import { startEntrypoint, type RunningProcess } from "../helpers/process.js";
import { tempApp } from "../helpers/app-root.js";
import { waitFor } from "../helpers/wait.js";

const running: RunningProcess[] = [];
afterAll(async () => {
  await Promise.all(running.map((run) => run.stop("SIGKILL")));
});

describe("stdout of node index.js", () => {
  it("writes a call's log line to stdout promptly even on a quiet server (log lines are batched)", async () => {
    const run = await startEntrypoint(["--port", "0", "--root", tempApp()], { APP_SESSION_SECRET: TEST_SESSION_SECRET });
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
    const run = await startEntrypoint(["--port", "0", "--root", tempApp()], { APP_SESSION_SECRET: TEST_SESSION_SECRET });
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

  it("writes readable lines in dev mode: time, level and message, then the fields", async () => {
    const run = await startEntrypoint(["--port", "0", "--root", tempApp(), "--dev"], { APP_SESSION_SECRET: TEST_SESSION_SECRET });
    running.push(run);
    expect((await fetch(run.url + "/__rpc/plugin/nobody/here", { method: "POST" })).status).toBe(404);
    await waitFor(() => run.stdout().includes("RPC_UNKNOWN_TARGET"), 3_000, "the rpc.rejected event");
    await run.stop();
    const lines = run.stdout().split("\n").filter((line) => line.trim() !== "");
    expect(lines).toContain(`    url: "${run.url}"`);
    expect(run.stdout()).toMatch(/^\[\d\d:\d\d:\d\d\.\d{3}\] WARN \(\d+\): rpc\.rejected\n(?: {4}.*\n)*? {4}code: "RPC_UNKNOWN_TARGET"$/m);
    expect(lines.filter((line) => line.startsWith("{"))).toEqual([]);
  });
});
