/**
 * `input`, `output` and declared errors over real HTTP (docs/guides/server-methods.md "Server methods"), each case with zod (plugin zodp) and valibot (plugin valip): where the
 * input step runs (no slot, no breaker, no worker, no stream), what a bad input answers
 * and logs (never the value), the parsed value the method gets, `output` by mode, and
 * `ctx.fail`.
 */
import { describe, expect, it } from "vitest";
import { join } from "node:path";
import { useServer, type ServerFixture } from "../helpers/server.js";
import { rpc } from "../helpers/http.js";
import { openStream } from "../helpers/stream.js";

const ROOT = join(import.meta.dirname, "../fixtures/validate-app");
const SECRET = "hunter2-correct-horse";

const app = useServer({ root: ROOT });

async function stats(server: ServerFixture, plugin: string): Promise<Record<string, number>> {
  return (await rpc(server.url, `plugin/${plugin}/stats`)).body.result;
}

function call(server: ServerFixture, path: string, args: unknown[]) {
  return rpc(server.url, path, { viewer: server.viewer, body: { args } });
}

describe.each(["zodp", "valip"])("input with %s", (plugin) => {
  it("hands the method the schema's output: transforms and defaults applied", async () => {
    const answer = await call(app, `plugin/${plugin}/greet`, [{ name: "ada" }]);
    expect(answer.status).toBe(200);
    expect(answer.body.result).toEqual({ got: { name: "ADA", times: 1 }, args: 1 });
  });

  it("checks an absent argument as undefined (a default fills it)", async () => {
    const answer = await call(app, `plugin/${plugin}/maybe`, []);
    expect(answer.body).toEqual({ result: { got: "anon" } });
  });

  it("answers 400 RPC_BAD_INPUT with each issue's path and message, logged once", async () => {
    const answer = await call(app, `plugin/${plugin}/greet`, [{ name: "", times: 1.5 }]);
    expect(answer.status).toBe(400);
    expect(answer.body.code).toBe("RPC_BAD_INPUT");
    const paths = answer.body.details.issues.map((issue: { path: unknown }) => issue.path);
    expect(paths).toEqual(expect.arrayContaining([["name"], ["times"]]));
    for (const issue of answer.body.details.issues) expect(typeof issue.message).toBe("string");
    // A number is a value too (valibot: "Received 1.5").
    expect(JSON.stringify(answer.body.details)).not.toContain("1.5");
    const reqId = answer.headers.get("x-request-id")!;
    const events = app.logs.forRequest(reqId);
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ event: "rpc.rejected", status: 400, code: "RPC_BAD_INPUT", method: "greet" });
  });

  it("gives the argument itself the empty path", async () => {
    const answer = await call(app, `plugin/${plugin}/greet`, ["not an object"]);
    expect(answer.status).toBe(400);
    expect(answer.body.details.issues[0].path).toEqual([]);
  });

  it("refuses a second argument", async () => {
    const answer = await call(app, `plugin/${plugin}/greet`, [{ name: "ada" }, "extra"]);
    expect(answer.status).toBe(400);
    expect(answer.body.code).toBe("RPC_BAD_INPUT");
    expect(answer.body.details.issues).toEqual([{ path: [], message: "Expected one argument, received 2" }]);
  });

  it("answers at most 20 issues", async () => {
    const many = Object.fromEntries(Array.from({ length: 30 }, (_, i) => [`k${i}`, i]));
    // zod and valibot both report an object's missing `name` and its bad `times`; an
    // array of 30 bad tags gives 30 more.
    const answer = await call(app, `plugin/${plugin}/iso`, [{ ...many, name: 1, tags: Array.from({ length: 30 }, (_, i) => i) }]);
    expect(answer.status).toBe(400);
    expect(answer.body.details.issues).toHaveLength(20);
  });

  it("never echoes the value, in the answer or the log", async () => {
    const answer = await call(app, `plugin/${plugin}/paint`, [{ color: SECRET }]);
    expect(answer.status).toBe(400);
    expect(answer.body.details.issues).toHaveLength(1);
    expect(answer.body.details.issues[0].path).toEqual(["color"]);
    expect(answer.body.details.issues[0].message).toContain("[value]");
    expect(JSON.stringify(answer.body)).not.toContain(SECRET);
    expect(app.logs.text()).not.toContain(SECRET);
  });

  it("takes no concurrency slot: a bad input answers 400 at once while a slow call holds it", async () => {
    const held = call(app, `plugin/${plugin}/hold`, [{ ms: 1500 }]);
    await new Promise((resolve) => setTimeout(resolve, 150));
    const started = performance.now();
    const bad = await call(app, `plugin/${plugin}/hold`, [{ ms: "long" }]);
    expect(bad.status).toBe(400);
    expect(bad.body.code).toBe("RPC_BAD_INPUT");
    expect(performance.now() - started).toBeLessThan(1000);
    // The slot is really held: a good call is refused by the full queue.
    const good = await call(app, `plugin/${plugin}/hold`, [{ ms: 1 }]);
    expect(good.body.code).toBe("RPC_QUEUE_FULL");
    expect((await held).body).toEqual({ result: "held" });
    expect((await stats(app, plugin)).hold).toBe(1);
  });

  it("is no breaker failure: bad inputs leave a failureThreshold-1 breaker closed", async () => {
    for (let i = 0; i < 3; i += 1) expect((await call(app, `plugin/${plugin}/flaky`, [{ n: "x" }])).body.code).toBe("RPC_BAD_INPUT");
    // The breaker is still closed: the method runs (and its own failure opens it).
    const ran = await call(app, `plugin/${plugin}/flaky`, [{ n: 1 }]);
    expect(ran.body.code).toBe("RPC_INTERNAL_ERROR");
    expect((await call(app, `plugin/${plugin}/flaky`, [{ n: 1 }])).body.code).toBe("RPC_CIRCUIT_OPEN");
    // The input step comes before the breaker: an open breaker still answers a bad input 400.
    expect((await call(app, `plugin/${plugin}/flaky`, [{ n: "x" }])).body.code).toBe("RPC_BAD_INPUT");
    expect((await stats(app, plugin)).flaky).toBe(1);
  });

  it("validates an isolated method's input in the main thread; the worker gets the parsed value", async () => {
    const good = await call(app, `plugin/${plugin}/iso`, [{ name: "  ada  " }]);
    expect(good.body).toEqual({ result: { got: { name: "ada", tags: [] }, isolated: true } });
    const bad = await call(app, `plugin/${plugin}/iso`, [{ name: 1 }]);
    expect(bad.status).toBe(400);
    expect(bad.body.code).toBe("RPC_BAD_INPUT");
    expect(bad.body.details.issues[0].path).toEqual(["name"]);
  });

  it("answers a streaming method's bad input as plain JSON, before the stream opens", async () => {
    const bad = await openStream(app.url, `plugin/${plugin}/ticks`, { viewer: app.viewer, args: [{ count: 9 }] });
    await bad.finished;
    expect(bad.status).toBe(400);
    expect(bad.headers["content-type"]).toMatch(/^application\/json/);
    expect(JSON.parse(bad.body())).toMatchObject({ code: "RPC_BAD_INPUT", details: { issues: [{ path: ["count"] }] } });
    const good = await openStream(app.url, `plugin/${plugin}/ticks`, { viewer: app.viewer, args: [{ count: 2 }] });
    await good.finished;
    expect(good.headers["content-type"]).toMatch(/^application\/x-ndjson/);
    expect(good.records.map(({ at: _at, ...record }) => record)).toEqual([{ event: { i: 0 } }, { event: { i: 1 } }, { done: true, ok: true, result: "done" }]);
    expect((await stats(app, plugin)).ticks).toBe(1);
  });

  it("bounds an async validator by the method's timeoutMs: 504, and the method never runs", async () => {
    const started = performance.now();
    const answer = await call(app, `plugin/${plugin}/slowCheck`, ["anything"]);
    expect(answer.status).toBe(504);
    expect(answer.body.code).toBe("RPC_TIMEOUT");
    expect(performance.now() - started).toBeLessThan(2000);
    expect((await stats(app, plugin)).slowCheck).toBeUndefined();
  });

  it("leaves a method without input alone: any arguments reach it", async () => {
    const answer = await call(app, `plugin/${plugin}/plain`, [1, { a: 2 }, "three"]);
    expect(answer.body).toEqual({ result: [1, { a: 2 }, "three"] });
  });
});

describe.each(["zodp", "valip"])("declared errors with %s", (plugin) => {
  it("answers a declared code with its status, message and details", async () => {
    const answer = await call(app, `plugin/${plugin}/lookup`, [{ code: "ITEM_MISSING" }]);
    expect(answer.status).toBe(404);
    expect(answer.body).toEqual({ error: "No such item", code: "ITEM_MISSING", details: { asked: "ITEM_MISSING" } });
    const fallback = await call(app, `plugin/${plugin}/lookup`, [{ code: "UPSTREAM_DOWN" }]);
    expect(fallback.status).toBe(503);
    expect(fallback.body).toMatchObject({ error: "UPSTREAM_DOWN", code: "UPSTREAM_DOWN" });
  });

  it("answers an undeclared code 500, as a bug in the method", async () => {
    const answer = await call(app, `plugin/${plugin}/lookup`, [{ code: "NOT_DECLARED" }]);
    expect(answer.status).toBe(500);
    expect(answer.body.code).toBe("RPC_INTERNAL_ERROR");
    const reqId = answer.headers.get("x-request-id")!;
    expect(JSON.stringify(app.logs.forRequest(reqId)[0])).toContain("NOT_DECLARED");
  });

  it("works in an isolated method", async () => {
    const answer = await call(app, `plugin/${plugin}/isoLookup`, [{ code: "ITEM_MISSING" }]);
    expect(answer.status).toBe(404);
    expect(answer.body).toEqual({ error: "No such item", code: "ITEM_MISSING", details: { asked: "ITEM_MISSING" } });
    expect((await call(app, `plugin/${plugin}/isoLookup`, [{ code: "NOPE" }])).body.code).toBe("RPC_INTERNAL_ERROR");
  });

  it("a declared 4xx is no breaker failure, a declared 5xx is", async () => {
    for (let i = 0; i < 3; i += 1) expect((await call(app, `plugin/${plugin}/guarded`, [{ code: "ITEM_MISSING" }])).status).toBe(404);
    expect((await call(app, `plugin/${plugin}/guarded`, [{ code: "UPSTREAM_DOWN" }])).status).toBe(503);
    expect((await call(app, `plugin/${plugin}/guarded`, [{ code: "ITEM_MISSING" }])).body.code).toBe("RPC_CIRCUIT_OPEN");
  });
});

describe("the demo's greeter", () => {
  const demo = useServer();

  it("checks greet's input with its Standard Schema and answers its declared error", async () => {
    expect((await call(demo, "plugin/greeter/greet", [{ name: "  Ada " }])).body).toEqual({ result: "Hello, Ada!" });
    expect((await call(demo, "plugin/greeter/greet", [])).body).toEqual({ result: "Hello, viewer!" });
    const bad = await call(demo, "plugin/greeter/greet", [{ name: 5 }]);
    expect([bad.status, bad.body.code, bad.body.details.issues[0].path]).toEqual([400, "RPC_BAD_INPUT", ["name"]]);
    const nobody = await call(demo, "plugin/greeter/greet", [{ name: "Nobody" }]);
    expect([nobody.status, nobody.body]).toEqual([422, { error: "Nobody is called that", code: "NOBODY_TO_GREET", details: { name: "Nobody" } }]);
  });
});
