// docs/guides/sessions-and-state.md and docs/guides/deployment.md "Shared state and Redis": the Redis session
// store against a real redis-server: one hash per session, changes applied at once, the size
// limit refusing all of a save, expiry with the session, and 503 while Redis is away.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Redis } from "ioredis";
import { createLogger } from "../../dist/log/logger.js";
import { RedisConnection } from "../../dist/state/redis-connection.js";
import { RedisSessionStore } from "../../dist/state/redis-session-store.js";
import { fieldBytes } from "../../dist/state/session-store.js";
import type { HttpError } from "../../dist/errors/http-error.js";
import { describeWithRedis, startRedis, useRedis } from "../helpers/redis.js";
import { LogCapture } from "../helpers/server.js";
import { waitFor } from "../helpers/wait.js";

const PREFIX = "test:";
const HOUR = 3_600_000;

function connect(url: string, logs = new LogCapture(), commandTimeoutMs = 500) {
  const { logger } = createLogger({ dev: false, destination: logs, secrets: [] });
  const connection = new RedisConnection({ url, keyPrefix: PREFIX, commandTimeoutMs, leaseMs: 10_000 }, logger);
  return { connection, store: new RedisSessionStore(connection), logs };
}

async function failure(promise: Promise<unknown>): Promise<HttpError> {
  try {
    await promise;
  } catch (error) {
    return error as HttpError;
  }
  throw new Error("expected the store to refuse");
}

describeWithRedis("RedisSessionStore", () => {
  const redis = useRedis();
  let connection: RedisConnection;
  let store: RedisSessionStore;
  let raw: Redis;

  beforeAll(async () => {
    ({ connection, store } = connect(redis.url));
    expect(await connection.whenReady(5_000)).toBe(true);
    raw = new Redis(redis.url, { lazyConnect: true });
    await raw.connect();
  });
  afterAll(async () => {
    await connection.close();
    raw.disconnect();
  });

  it("saves fields as one hash per session, under the key prefix, and loads them back", async () => {
    expect((await store.load("s1")).size).toBe(0);
    await store.save("s1", { set: [["theme", '"dark"'], ["zoom", "2"]], deleted: [] }, Date.now() + HOUR, 1000);
    expect(await raw.hgetall(`${PREFIX}sess:s1`)).toEqual({ theme: '"dark"', zoom: "2" });
    expect([...(await store.load("s1"))]).toEqual([
      ["theme", '"dark"'],
      ["zoom", "2"],
    ]);
    // Last writer wins per field; fields another call did not touch stay.
    await store.save("s1", { set: [["zoom", "3"]], deleted: ["theme"] }, Date.now() + HOUR, 1000);
    expect(Object.fromEntries(await store.load("s1"))).toEqual({ zoom: "3" });
  });

  it("keeps names such as __proto__ as plain data", async () => {
    await store.save("s-proto", { set: [["__proto__", '{"x":1}'], ["constructor", "1"]], deleted: [] }, Date.now() + HOUR, 1000);
    const loaded = await store.load("s-proto");
    expect(loaded.get("__proto__")).toBe('{"x":1}');
    expect(loaded.get("constructor")).toBe("1");
  });

  it("refuses a save that would pass maxBytes, all of it, counting UTF-8 bytes of names and values", async () => {
    const value = '"ééé"'; // 8 bytes in UTF-8, 5 characters
    expect(fieldBytes("a", value)).toBe(9);
    await store.save("s2", { set: [["a", value]], deleted: [] }, Date.now() + HOUR, 18);
    // 9 + 9 = 18 fits exactly; one byte more is refused with nothing of the save applied.
    await store.save("s2", { set: [["b", value]], deleted: [] }, Date.now() + HOUR, 18);
    // a 4 + c 13 = 17 bytes once b is gone: over 14, so neither the sets nor the delete land.
    const error = await failure(store.save("s2", { set: [["c", '"ééééé"'], ["a", '"x"']], deleted: ["b"] }, Date.now() + HOUR, 14));
    expect([error.status, error.code, error.details]).toEqual([413, "SESSION_DATA_TOO_LARGE", { maxBytes: 14 }]);
    expect(Object.fromEntries(await store.load("s2"))).toEqual({ a: value, b: value });
    // Deletes count before the check: the same save fits once it frees enough.
    await store.save("s2", { set: [["c", "1"]], deleted: ["a", "b"] }, Date.now() + HOUR, 2);
    expect(Object.fromEntries(await store.load("s2"))).toEqual({ c: "1" });
  });

  it("applies a save of thousands of fields at once", async () => {
    const set = Array.from({ length: 5_000 }, (_, i) => [`f${i}`, String(i)] as const);
    await store.save("s-many", { set, deleted: [] }, Date.now() + HOUR, 1_000_000);
    expect((await store.load("s-many")).size).toBe(5_000);
    await store.save("s-many", { set: [], deleted: set.map(([name]) => name) }, Date.now() + HOUR, 1_000_000);
    expect(await raw.exists(`${PREFIX}sess:s-many`)).toBe(0);
  });

  it("expires the data with the session, and deletes a session left empty", async () => {
    await store.save("s3", { set: [["a", "1"]], deleted: [] }, Date.now() + 300, 1000);
    const ttl = await raw.pttl(`${PREFIX}sess:s3`);
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(300);
    await waitFor(async () => (await store.load("s3")).size === 0, 2_000, "the session's data to expire");
    await store.save("s4", { set: [["a", "1"]], deleted: [] }, Date.now() + HOUR, 1000);
    await store.save("s4", { set: [], deleted: ["a"] }, Date.now() + HOUR, 1000);
    expect(await raw.exists(`${PREFIX}sess:s4`)).toBe(0);
  });

  it("answers 503 SESSION_STORE_UNAVAILABLE while Redis is away, and works again once it returns", async () => {
    await redis.kill();
    const loadError = await failure(store.load("s1"));
    expect([loadError.status, loadError.code]).toEqual([503, "SESSION_STORE_UNAVAILABLE"]);
    const saveError = await failure(store.save("s1", { set: [["a", "1"]], deleted: [] }, Date.now() + HOUR, 1000));
    expect(saveError.code).toBe("SESSION_STORE_UNAVAILABLE");
    // The cause is kept for the log, without the command's arguments (the session's data).
    expect((saveError as { cause?: Error }).cause?.message).toBeTruthy();
    expect(JSON.stringify(Object.entries((saveError as { cause?: object }).cause ?? {}))).not.toContain("args");
    await redis.restart();
    await waitFor(() => connection.ready, 5_000, "the connection to come back");
    await store.save("s1", { set: [["a", "1"]], deleted: [] }, Date.now() + HOUR, 1000);
    // Without persistence, what Redis held before it died is gone.
    expect(Object.fromEntries(await store.load("s1"))).toEqual({ a: "1" });
  });
});

describeWithRedis("RedisConnection", () => {
  it("starts while Redis is down, answers 503, and connects by itself once Redis is up", async () => {
    const later = await startRedis();
    await later.kill();
    const { connection, store, logs } = connect(later.url);
    try {
      expect(await connection.whenReady(200)).toBe(false);
      expect((await failure(store.load("x"))).code).toBe("SESSION_STORE_UNAVAILABLE");
      await later.restart();
      await waitFor(() => connection.ready, 5_000, "the connection");
      expect((await store.load("x")).size).toBe(0);
      const lines = logs.lines.map((line) => String(line.msg));
      expect(lines.filter((msg) => msg.includes("unreachable"))).toHaveLength(1);
      expect(lines.some((msg) => msg.includes("reachable again"))).toBe(true);
    } finally {
      await connection.close();
      await later.stop();
    }
  });

  it("never logs the URL's password, only the host and port", async () => {
    const locked = await startRedis(["--requirepass", "s3cret-pass"]);
    const logs = new LogCapture();
    const { logger } = createLogger({ dev: false, destination: logs, secrets: [] });
    const good = new RedisConnection({ url: `redis://:s3cret-pass@127.0.0.1:${locked.port}`, keyPrefix: PREFIX, commandTimeoutMs: 500, leaseMs: 10_000 }, logger);
    const bad = new RedisConnection({ url: `redis://:wrong-pass@127.0.0.1:${locked.port}`, keyPrefix: PREFIX, commandTimeoutMs: 500, leaseMs: 10_000 }, logger);
    try {
      expect(await good.whenReady(5_000)).toBe(true);
      await waitFor(() => logs.text().includes("unreachable"), 5_000, "the refused connection's warning");
      expect(bad.ready).toBe(false);
      expect(logs.text()).toContain(`127.0.0.1:${locked.port}`);
      expect(logs.text()).not.toContain("s3cret-pass");
      expect(logs.text()).not.toContain("wrong-pass");
    } finally {
      await good.close();
      await bad.close();
      await locked.stop();
    }
  });
});

describe("redis helper", () => {
  it("is skipped only outside CI", () => {
    expect(describeWithRedis === describe || process.env.CI !== "true").toBe(true);
  });
});
