// docs/guides/server-methods.md "Runtime protections": worker isolation — reduced context, termination on timeout, crashes that heal,
// forever-loops that do not block the rest of the server.
import { describe, expect, it } from "vitest";
import { existsSync, mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { useServer } from "../helpers/server.js";
import { rpc } from "../helpers/http.js";

const ROOT = join(import.meta.dirname, "../fixtures/runtime-app");

const app = useServer({ root: ROOT });

const iso = (method: string, body: Record<string, unknown> = {}) => rpc(app.url, `module/iso/${method}`, { viewer: app.viewer, body });

describe("worker isolation", () => {
  it("gives the method only the serialisable context, in a worker thread", async () => {
    const answer = await iso("context", { args: [1, { two: 2 }], viewerId: "v1", contextId: "c1" });
    expect(answer.status).toBe(200);
    const result = answer.body.result;
    expect(result.keys).toEqual(["args", "config", "contextId", "core", "emit", "fail", "id", "itemId", "kind", "method", "requestId", "secure", "session", "signal", "tempDir", "trace", "user", "viewerId"]);
    expect(result).toMatchObject({
      args: [1, { two: 2 }],
      viewerId: "v1",
      contextId: "c1",
      config: { answer: 42 },
      kind: "module",
      id: "iso",
      method: "context",
      requestId: "string",
      signal: true,
      user: null,
      isMainThread: false,
    });
    expect(result.session).toEqual({ id: expect.any(String), createdAt: expect.any(Number) });
  });

  it("loads .ts files in workers too", async () => {
    const answer = await iso("whereAmI");
    expect(answer.body.result.isMainThread).toBe(false);
    expect(answer.body.result.threadId).toBeGreaterThan(0);
  });

  it("installs APP_SERVER inside workers", async () => {
    const answer = await iso("outbound");
    expect(answer.body.result).toEqual({ safeFetch: "function", validateUpstreamUrl: "function", dev: false });
  });

  it("terminates a worker that loops forever at its timeout, while a normal call next to it answers at once", async () => {
    const looping = iso("loop");
    await new Promise((resolve) => setTimeout(resolve, 50));
    const started = Date.now();
    const normal = await iso("inlineEcho", { args: ["still here"] });
    expect(normal.body.result).toBe("still here");
    // Well before the loop's own 500 ms timeout: it did not wait for the looping worker.
    expect(Date.now() - started).toBeLessThan(400);
    const answer = await looping;
    expect([answer.status, answer.body.code]).toEqual([504, "RPC_TIMEOUT"]);
    // The pool replaced the terminated worker.
    expect((await iso("context")).status).toBe(200);
  });

  it("still terminates workers at their timeout when their clients went away first", async () => {
    // Two forever-loops fill the pool (maxThreads 2); their clients leave at once.
    const leave = (): Promise<unknown> => {
      const controller = new AbortController();
      const call = fetch(`${app.url}/__rpc/module/iso/loop`, {
        method: "POST",
        headers: { cookie: app.viewer.cookie, "x-app-csrf": app.viewer.csrf, "content-type": "application/json" },
        body: "{}",
        signal: controller.signal,
      }).catch(() => null);
      setTimeout(() => controller.abort(), 100);
      return call;
    };
    await Promise.all([leave(), leave()]);
    // loop's timeoutMs is 500, plus the default 250 ms abort grace: past both, both
    // workers must have been replaced.
    await new Promise((resolve) => setTimeout(resolve, 950));
    const started = Date.now();
    const answer = await iso("context", { args: ["free again"] });
    expect(answer.body.result.args).toEqual(["free again"]);
    expect(Date.now() - started).toBeLessThan(400);
  });

  it("fires ctx.signal inside the worker when the client goes away", async () => {
    const marker = join(mkdtempSync(join(tmpdir(), "counterpart-iso-")), "marker");
    const controller = new AbortController();
    const pending = fetch(`${app.url}/__rpc/module/iso/honoursSignal`, {
      method: "POST",
      headers: { cookie: app.viewer.cookie, "x-app-csrf": app.viewer.csrf, "content-type": "application/json" },
      body: JSON.stringify({ args: [marker] }),
      signal: controller.signal,
    }).catch((error: Error) => error.name);
    await new Promise((resolve) => setTimeout(resolve, 80));
    expect(existsSync(marker)).toBe(false);
    controller.abort();
    expect(await pending).toBe("AbortError");
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(readFileSync(marker, "utf8")).toBe("aborted");
  });

  for (const method of ["exit", "throwLater", "oom"]) {
    it(`answers 500 RPC_WORKER_CRASHED when the worker dies (${method}), then heals`, async () => {
      const answer = await iso(method);
      expect([answer.status, answer.body.code]).toEqual([500, "RPC_WORKER_CRASHED"]);
      const next = await iso("context", { args: ["after"] });
      expect(next.status).toBe(200);
      expect(next.body.result.args).toEqual(["after"]);
    });
  }

  it("refuses args too deep to copy to a worker with 400 RPC_BAD_REQUEST, logged as rejected, the pool unharmed", async () => {
    // Valid JSON, too deep to be copied to a worker thread: the gateway's depth limit
    // refuses it as it reads the body (docs/guides/server-methods.md "Arguments and nesting").
    const rawBody = `{"args":[${"[".repeat(100_000)}${"]".repeat(100_000)}]}`;
    const answer = await rpc(app.url, "module/iso/context", { viewer: app.viewer, rawBody });
    expect([answer.status, answer.body.code]).toEqual([400, "RPC_BAD_REQUEST"]);
    expect(answer.body.details).toEqual({ reason: "too-deep", limit: 64 });
    const events = app.logs.events().filter((line) => line.method === "context" && line.status === 400);
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ event: "rpc.rejected", code: "RPC_BAD_REQUEST", kind: "module", id: "iso" });
    expect(app.logs.events().some((line) => line.code === "RPC_WORKER_CRASHED" && line.method === "context")).toBe(false);
    // No worker died or was replaced: both threads answer at once as before.
    const threads = await Promise.all([iso("whereAmI"), iso("whereAmI")]);
    for (const thread of threads) expect(thread.status).toBe(200);
    const next = await iso("context", { args: [[[["fine"]]]] });
    expect(next.body.result.args).toEqual([[[["fine"]]]]);
  });

  it("answers 500 RPC_BAD_RESULT for a result that cannot be serialised", async () => {
    const answer = await iso("badResult");
    expect([answer.status, answer.body.code]).toEqual([500, "RPC_BAD_RESULT"]);
  });

  it("passes an RpcError thrown in a worker through with its status, code and details", async () => {
    const answer = await iso("rpcError");
    expect(answer.status).toBe(422);
    expect(answer.body).toEqual({ error: "invalid in a worker", code: "ISO_INVALID", details: { field: "x" } });
  });

  it("answers any other error as a generic 500 and logs the real one", async () => {
    const answer = await iso("boom");
    expect(answer.body).toMatchObject({ code: "RPC_INTERNAL_ERROR", error: "Internal server error" });
    const event = app.logs.forRequest(answer.body.details.requestId)[0]!;
    expect(event).toMatchObject({ event: "rpc.error", status: 500 });
    expect(JSON.stringify(event)).toContain("worker secret internals");
  });
});
