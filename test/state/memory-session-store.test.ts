/**
 * The in-memory session store's bounds (docs/guides/sessions-and-state.md): at most `maxEntries`
 * sessions and `maxBytes` of data, the least recently used dropped first; data gone when
 * its session expires; a save over a session's limit changes nothing.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import { MemorySessionStore } from "../../dist/state/memory-session-store.js";

const HOUR = 3_600_000;
const set = (...pairs: Array<[string, unknown]>) => ({ set: pairs.map(([name, value]) => [name, JSON.stringify(value)] as const), deleted: [] });
const fields = async (store: MemorySessionStore, id: string) => Object.fromEntries([...(await store.load(id))].map(([name, json]) => [name, JSON.parse(json)]));

afterEach(() => {
  vi.useRealTimers();
});

describe("MemorySessionStore", () => {
  it("drops the least recently used session past maxEntries", async () => {
    const store = new MemorySessionStore(2, 1_000_000);
    const expires = Date.now() + HOUR;
    await store.save("a", set(["v", 1]), expires, 1_000);
    await store.save("b", set(["v", 2]), expires, 1_000);
    await store.load("a"); // a is now the most recent
    await store.save("c", set(["v", 3]), expires, 1_000);
    expect(await fields(store, "a")).toEqual({ v: 1 });
    expect(await fields(store, "b")).toEqual({});
    expect(await fields(store, "c")).toEqual({ v: 3 });
    await store.close();
  });

  it("drops the least recently used sessions past maxBytes", async () => {
    const store = new MemorySessionStore(100, 250);
    const expires = Date.now() + HOUR;
    for (const id of ["a", "b", "c"]) await store.save(id, set(["blob", "x".repeat(95)]), expires, 1_000);
    expect(store.size.sessions).toBe(2);
    expect(store.size.bytes).toBeLessThanOrEqual(250);
    expect(await fields(store, "a")).toEqual({});
    await store.close();
  });

  it("refuses a save that would leave the session over its limit, keeping what it had", async () => {
    const store = new MemorySessionStore(100, 1_000_000);
    const expires = Date.now() + HOUR;
    await store.save("a", set(["keep", "me"]), expires, 100);
    await expect(store.save("a", set(["small", 1], ["blob", "x".repeat(200)]), expires, 100)).rejects.toMatchObject({ code: "SESSION_DATA_TOO_LARGE", status: 413 });
    expect(await fields(store, "a")).toEqual({ keep: "me" });
    // Deleting frees room in the same save.
    await store.save("a", { set: [["blob", JSON.stringify("x".repeat(80))]], deleted: ["keep"] }, expires, 100);
    expect(Object.keys(await fields(store, "a"))).toEqual(["blob"]);
    await store.close();
  });

  it("forgets a session's data when the session expires", async () => {
    vi.useFakeTimers({ now: new Date("2026-11-24T10:00:00Z") });
    const store = new MemorySessionStore(100, 1_000_000);
    await store.save("a", set(["v", 1]), Date.now() + 1_000, 1_000);
    await store.save("b", set(["v", 2]), Date.now() + HOUR, 1_000);
    vi.advanceTimersByTime(999);
    expect(await fields(store, "a")).toEqual({ v: 1 });
    // Past its expiry, and swept out by the minute's sweep even when nobody asks.
    vi.advanceTimersByTime(60_000);
    expect(store.size).toEqual({ sessions: 1, bytes: 2 });
    expect(await fields(store, "a")).toEqual({});
    expect(await fields(store, "b")).toEqual({ v: 2 });
    await store.close();
  });
});
