// docs/guides/deployment.md "Crashes": a crashed worker is replaced after 100 ms doubling to 5 s; five crashes
// within 30 s stop the master. Pure arithmetic on given times: no clock involved.
import { describe, expect, it } from "vitest";
import { RestartPolicy } from "../../dist/cluster/restart-policy.js";

describe("RestartPolicy", () => {
  it("doubles the delay with each recent crash and stops at the fifth within 30 s", () => {
    const policy = new RestartPolicy();
    expect([0, 1_000, 2_000, 3_000].map((at) => policy.recordCrash(at))).toEqual([
      { restart: true, delayMs: 100 },
      { restart: true, delayMs: 200 },
      { restart: true, delayMs: 400 },
      { restart: true, delayMs: 800 },
    ]);
    expect(policy.recordCrash(29_999)).toEqual({ restart: false, crashes: 5, windowMs: 30_000 });
    expect(policy.total).toBe(5);
  });

  it("forgets crashes older than the window, so a rare crash restarts at once again", () => {
    const policy = new RestartPolicy();
    for (const at of [0, 1_000, 2_000, 3_000]) policy.recordCrash(at);
    expect(policy.recordCrash(32_500)).toEqual({ restart: true, delayMs: 200 }); // 3000 and 32500 are recent
    expect(policy.recordCrash(63_000)).toEqual({ restart: true, delayMs: 100 });
    expect(policy.recordCrash(100_000)).toEqual({ restart: true, delayMs: 100 });
  });

  it("caps the delay", () => {
    const policy = new RestartPolicy({ crashLimit: 100 });
    let last = 0;
    for (let i = 0; i < 10; i++) {
      const decision = policy.recordCrash(i);
      if (decision.restart) last = decision.delayMs;
    }
    expect(last).toBe(5_000);
  });
});
