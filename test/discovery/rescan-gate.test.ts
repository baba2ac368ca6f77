// src/discovery/rescan-gate.ts: dev mode rescans the disk for a call to a name nobody knows.
// A caller always gets a scan that started after it asked (never a stale answer), callers
// that ask while one runs share the next, and scans start at least the interval apart.
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { RescanGate } from "../../dist/discovery/rescan-gate.js";

/** A scan that records when it started and ends when the test says. */
function scans() {
  const started: number[] = [];
  const finish: Array<() => void> = [];
  const scan = () => {
    started.push(Date.now());
    return new Promise<void>((resolve) => finish.push(resolve));
  };
  return { started, finish, scan };
}

describe("RescanGate", () => {
  beforeEach(() => vi.useFakeTimers({ now: 1_000_000 }));
  afterEach(() => vi.useRealTimers());

  it("runs the first scan at once", async () => {
    const gate = new RescanGate(100);
    const { started, finish, scan } = scans();
    const done = gate.run(scan);
    await vi.advanceTimersByTimeAsync(0);
    expect(started).toEqual([1_000_000]);
    finish[0]!();
    await done;
  });

  it("gives callers that ask during a scan one shared scan that starts after it, not the running one", async () => {
    const gate = new RescanGate(100);
    const { started, finish, scan } = scans();
    const first = gate.run(scan);
    await vi.advanceTimersByTimeAsync(0);
    let lateDone = false;
    const late = [gate.run(scan), gate.run(scan), gate.run(scan)];
    void Promise.all(late).then(() => (lateDone = true));
    await vi.advanceTimersByTimeAsync(500);
    // The first scan may have read the disk before the late callers' files were written.
    expect(started).toHaveLength(1);
    expect(lateDone).toBe(false);
    finish[0]!();
    await first;
    await vi.advanceTimersByTimeAsync(0);
    expect(started).toHaveLength(2);
    expect(lateDone).toBe(false);
    finish[1]!();
    await Promise.all(late);
    expect(started).toHaveLength(2);
  });

  it("starts scans at least the interval apart, however many calls come", async () => {
    const gate = new RescanGate(100);
    const { started, finish, scan } = scans();
    const first = gate.run(scan);
    await vi.advanceTimersByTimeAsync(0);
    finish[0]!();
    await first;
    await vi.advanceTimersByTimeAsync(10);
    const next = Array.from({ length: 20 }, () => gate.run(scan));
    await vi.advanceTimersByTimeAsync(80);
    expect(started).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(10);
    expect(started).toEqual([1_000_000, 1_000_100]);
    finish[1]!();
    await Promise.all(next);
  });
});
