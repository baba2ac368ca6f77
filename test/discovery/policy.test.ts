// README "Server methods": the policy forms a method may use, resolved once at start.
import { describe, expect, it } from "vitest";
import { readPolicyExport, resolvePolicy } from "../../dist/discovery/policy.js";

const defaults = { expose: "exports" as const, maxBodyBytes: 1000, timeoutMs: 30_000, maxConcurrency: undefined, queueLimit: undefined, isolation: {}, streamHeartbeatMs: 15_000, validateOutput: false };
const resolve = (entry: unknown) => resolvePolicy(readPolicyExport({ m: entry }, "f.server.mjs").get("m"), defaults, "plugin/p/m", "plugin/p");

describe("policy", () => {
  it("auth: false is public without a session", () => {
    expect(resolve({ auth: false })).toMatchObject({ public: true, requireSession: false });
  });

  it("reads the flat legacy runtime fields, and runtime wins over them", () => {
    expect(resolve({ timeoutMs: 5, maxBodyBytes: 10, maxConcurrency: 2, queueLimit: 0, runtime: { timeoutMs: 7 } })).toMatchObject({
      timeoutMs: 7,
      maxBodyBytes: 10,
      maxConcurrency: 2,
      queueLimit: 0,
    });
  });

  it("scopes a concurrencyKey to its item, and defaults it to the method", () => {
    expect(resolve({ runtime: { concurrencyKey: "chat-turn" } }).concurrencyKey).toBe("plugin/p/chat-turn");
    expect(resolve({}).concurrencyKey).toBe("plugin/p/m");
  });

  it("fills a breaker's key, threshold and reset, and reads maxConcurrency 0 as unlimited", () => {
    expect(resolve({ runtime: { circuitBreaker: {} } }).circuitBreaker).toEqual({ key: "plugin/p/m", failureThreshold: 5, resetAfterMs: 30_000 });
    expect(resolve({ circuitBreaker: { key: "shared", failureThreshold: 2 } }).circuitBreaker).toEqual({ key: "shared", failureThreshold: 2, resetAfterMs: 30_000 });
    expect(resolve({ maxConcurrency: 0 }).maxConcurrency).toBeUndefined();
  });

  it("takes concurrencyScope in runtime or flat, defaults it to the process, and refuses other values", () => {
    expect(resolve({}).concurrencyScope).toBe("process");
    expect(resolve({ runtime: { maxConcurrency: 4, concurrencyScope: "deployment" } }).concurrencyScope).toBe("deployment");
    expect(resolve({ maxConcurrency: 4, concurrencyScope: "deployment", runtime: { concurrencyScope: "process" } }).concurrencyScope).toBe("process");
    expect(resolve({ maxConcurrency: 4, concurrencyScope: "deployment" }).concurrencyScope).toBe("deployment");
    expect(() => resolve({ runtime: { concurrencyScope: "host" } })).toThrow(/policy\.m\.runtime\.concurrencyScope/);
    expect(() => resolve({ concurrencyScope: "global" })).toThrow(/policy\.m\.concurrencyScope/);
  });

  it("takes runtime.streaming, and keeps unknown keys errors", () => {
    expect(resolve({ runtime: { streaming: true } }).streaming).toBe(true);
    expect(resolve({}).streaming).toBe(false);
    expect(() => resolve({ runtime: { stream: true } })).toThrow(/policy\.m\.runtime/);
    expect(() => resolve({ auth: true })).toThrow(/policy\.m\.auth/);
    expect(() => resolve({ auth: { required: true } })).toThrow(/policy\.m\.auth/);
  });
});
