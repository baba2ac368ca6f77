// docs/guides/server-methods.md "Runtime protections", `args` and JSON depth: a body well under `maxBodyBytes`
// that holds too many arguments or JSON nested too deep is the caller's fault, answered
// 400 RPC_BAD_REQUEST when the body is read: never a 500, a server error in the log or a
// breaker failure (a stack overflow spreading the arguments, serialising the result or
// saving the session's data used to be all three).
import { describe, expect, it } from "vitest";
import { useServer } from "../helpers/server.js";
import { tempApp } from "../helpers/app-root.js";
import { rpc } from "../helpers/http.js";

const MAX_ARGS = 64;
const MAX_DEPTH = 64;

const METHODS = `
const breaker = { circuitBreaker: { failureThreshold: 1, resetAfterMs: 60000 } };
export const policy = {
  count: { auth: { public: true }, runtime: breaker },
  isolatedCount: { auth: { public: true }, runtime: { isolation: "worker" } },
  echo: { auth: { public: true }, runtime: breaker },
};
export function count(_ctx, ...args) { return args.length; }
export function isolatedCount(_ctx, ...args) { return args.length; }
export function echo(_ctx, value) { return value ?? null; }
export function keep(ctx, value) { ctx.session.kept = value; return "kept"; }
`;

/** `{"args":[ <value nested levels deep> ]}`: the body itself is two levels more. */
function nestedArray(levels: number): string {
  return "[".repeat(levels) + "]".repeat(levels);
}
function nestedObject(levels: number): string {
  return '{"a":'.repeat(levels - 1) + "{}" + "}".repeat(levels - 1);
}

describe("how many arguments, how deep", () => {
  const app = useServer({ root: tempApp({ files: { "plugins/p/p.server.mjs": METHODS } }) });
  const serverErrors = () => app.logs.lines.filter((line) => Number(line.level) >= 50);

  it(`refuses more than ${MAX_ARGS} arguments with 400, inline or isolated, and counts no breaker failure`, async () => {
    const many = JSON.stringify({ args: new Array(125_000).fill(1) });
    expect(many.length).toBeLessThan(1024 * 1024);
    for (const method of ["count", "isolatedCount"]) {
      const refused = await rpc(app.url, `plugin/p/${method}`, { rawBody: many });
      expect([method, refused.status, refused.body]).toEqual([
        method,
        400,
        { error: `At most ${MAX_ARGS} arguments`, code: "RPC_BAD_REQUEST", details: { reason: "too-many-args", limit: MAX_ARGS } },
      ]);
      const justOver = await rpc(app.url, `plugin/p/${method}`, { body: { args: new Array(MAX_ARGS + 1).fill(1) } });
      expect([method, justOver.status, justOver.body.details.reason]).toEqual([method, 400, "too-many-args"]);
      const atLimit = await rpc(app.url, `plugin/p/${method}`, { body: { args: new Array(MAX_ARGS).fill(1) } });
      expect([method, atLimit.status, atLimit.body]).toEqual([method, 200, { result: MAX_ARGS }]);
    }
    // The breaker opens at its first failure: none was counted.
    expect((await rpc(app.url, "plugin/p/count", { body: { args: [] } })).status).toBe(200);
    expect(app.logs.events().filter((event) => event.code === "RPC_BAD_REQUEST").map((event) => event.event)).toEqual(["rpc.rejected", "rpc.rejected", "rpc.rejected", "rpc.rejected"]);
    expect(serverErrors()).toEqual([]);
  });

  it(`refuses JSON nested more than ${MAX_DEPTH} levels with 400, before any method runs or any session data is saved`, async () => {
    for (const deep of [nestedArray(8000), nestedObject(5000)]) {
      for (const method of ["echo", "keep"]) {
        const answer = await rpc(app.url, `plugin/p/${method}`, { rawBody: `{"args":[${deep}]}`, viewer: app.viewer });
        expect([method, answer.status, answer.body]).toEqual([
          method,
          400,
          { error: `JSON nested more than ${MAX_DEPTH} levels deep`, code: "RPC_BAD_REQUEST", details: { reason: "too-deep", limit: MAX_DEPTH } },
        ]);
      }
    }
    // Deep anywhere in the body, args or not.
    const elsewhere = await rpc(app.url, "plugin/p/echo", { rawBody: `{"args":[],"extra":${nestedArray(100)}}` });
    expect([elsewhere.status, elsewhere.body.details]).toEqual([400, { reason: "too-deep", limit: MAX_DEPTH }]);
    // The breaker opens at its first failure: none was counted.
    expect((await rpc(app.url, "plugin/p/echo", { body: { args: [1] } })).body).toEqual({ result: 1 });
    expect(serverErrors()).toEqual([]);
  });

  it("takes JSON exactly as deep as the limit, and brackets inside strings at any count", async () => {
    // The body's object and the args array are two of the levels.
    const atLimit = JSON.parse(nestedArray(MAX_DEPTH - 2)) as unknown;
    expect((await rpc(app.url, "plugin/p/echo", { body: { args: [atLimit] } })).body).toEqual({ result: atLimit });
    const overLimit = await rpc(app.url, "plugin/p/echo", { rawBody: `{"args":[${nestedArray(MAX_DEPTH - 1)}]}` });
    expect(overLimit.status).toBe(400);
    const text = `"${"[{".repeat(5000)}\\"]}"`;
    expect((await rpc(app.url, "plugin/p/echo", { rawBody: `{"args":[${text}]}` })).body).toEqual({ result: JSON.parse(text) });
    expect((await rpc(app.url, "plugin/p/keep", { viewer: app.viewer, body: { args: [atLimit] } })).body).toEqual({ result: "kept" });
  });
});
