// The per-process counter behind `rateLimit` (docs/guides/server-methods.md "Rate limits"): fixed windows opened
// by a caller's first call, a refusal that takes no point and does not move the window's
// end, points given back, and windows that ended forgotten. Time is passed in.
import { describe, expect, it } from "vitest";
import { WindowCounter } from "../../src/runtime/window-counter.js";

describe("WindowCounter", () => {
  it("admits `points` calls per window and caller, then says how long until the window ends", () => {
    const counter = new WindowCounter(2, 1_000);
    expect([counter.consume("a", 0), counter.consume("a", 100), counter.consume("b", 100)]).toEqual([0, 0, 0]);
    expect(counter.consume("a", 400)).toBe(600);
    // A refusal does not move the end, and took no point.
    expect(counter.consume("a", 999.5)).toBe(1);
    expect(counter.consume("a", 1_000)).toBe(0);
  });

  it("gives a point back", () => {
    const counter = new WindowCounter(1, 1_000);
    expect(counter.consume("a", 0)).toBe(0);
    counter.reward("a");
    expect(counter.consume("a", 10)).toBe(0);
    expect(counter.consume("a", 20)).toBe(980);
  });
});
