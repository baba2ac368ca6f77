/**
 * Which methods can read `ctx.session` (docs/guides/sessions-and-state.md "Session data"): decided from the source
 * when a method is loaded, and anything the reading cannot rule out counts as a use.
 */
import { describe, expect, it } from "vitest";
import { mayUseSession } from "../../src/discovery/session-use.js";

type Fn = (...args: never[]) => unknown;
declare const helper: (value: unknown) => unknown;
declare const other: { ctx: unknown };

describe("mayUseSession", () => {
  it.each<[string, Fn]>([
    ["an unused ctx", function echo(_ctx: unknown, input: unknown) { return input; }],
    ["property reads only", (ctx: { log: { info(x: unknown): void } }, x: unknown) => ctx.log.info(x)],
    ["optional reads", async (ctx?: { signal: unknown }) => ctx?.signal],
    ["a bare arrow", ((ctx: { config: unknown }) => ctx.config) as Fn],
    ["no parameter", function none() { return 1; }],
    ["a method shorthand", { m(ctx: { x: number }, y: number) { return ctx.x + y; } }.m],
    ["a generator", async function* gen(ctx: { x: unknown }) { yield ctx.x; }],
    ["another object's ctx property", function f(_ctx: unknown) { return other.ctx; }],
  ])("no: %s", (_name, fn) => {
    expect(mayUseSession(fn)).toBe(false);
  });

  it.each<[string, Fn]>([
    ["ctx.session", function f(ctx: { session: unknown }) { return ctx.session; }],
    ["ctx passed on", function f(ctx: unknown) { return helper(ctx); }],
    ["ctx destructured", function f(ctx: { log: unknown }) { const { log } = ctx; return log; }],
    ["a computed read", function f(ctx: Record<string, unknown>) { return ctx["sess" + "ion"]; }],
    ["arguments", function f(_ctx: unknown) { return arguments[0]; }],
    ["a destructured parameter", function f({ log }: { log: unknown }) { return log; }],
    ["a default value", function f(ctx: { x?: unknown } = {}) { return ctx.x; }],
    ["a rest parameter", function f(...all: unknown[]) { return all; }],
    ["an escaped name", new Function("ctx", "return ctx.sess\\u0069on") as Fn],
    ["a bound function", function f(ctx: { x: unknown }) { return ctx.x; }.bind(null)],
    ["ctx in a template", function f(ctx: unknown) { return `${String(ctx)}`; }],
    ["ctx copied", function f(ctx: { x: unknown }) { const c = ctx; return c.x; }],
    ["ctx spread into an object", function f(ctx: object) { return helper({ ...ctx }); }],
    ["a computed method name", { ["c" + "m"](ctx: { x: unknown }) { return ctx.x; } }.cm!],
    ["a class", class Exported {} as unknown as Fn],
  ])("yes: %s", (_name, fn) => {
    expect(mayUseSession(fn)).toBe(true);
  });
});
