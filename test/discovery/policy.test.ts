// docs/guides/server-methods.md "Server methods": the policy forms a method may use, resolved once at start.
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

  it("takes rateLimit as one limit or a list, in runtime or flat, with the scope defaulted to the process", () => {
    expect(resolve({}).rateLimit).toBeUndefined();
    expect(resolve({ runtime: { rateLimit: { points: 5, durationMs: 1_000, key: "session" } } }).rateLimit).toEqual([{ points: 5, durationMs: 1_000, key: "session", scope: "process" }]);
    expect(resolve({ rateLimit: [{ points: 5, durationMs: 1_000, key: "ip" }, { points: 100, durationMs: 60_000, key: "global", scope: "deployment" }] }).rateLimit).toEqual([
      { points: 5, durationMs: 1_000, key: "ip", scope: "process" },
      { points: 100, durationMs: 60_000, key: "global", scope: "deployment" },
    ]);
  });

  it("refuses a bad rateLimit with a line naming the field and what is wrong", () => {
    const problem = (rateLimit: unknown) => {
      try {
        resolve({ runtime: { rateLimit } });
      } catch (error) {
        return (error as Error).message.replace(/^f\.server\.mjs: /, "");
      }
      return "accepted";
    };
    expect(problem({ points: 0, durationMs: 1_000, key: "ip" })).toBe("policy.m.runtime.rateLimit.points: Too small: expected number to be >0");
    expect(problem({ points: 1.5, durationMs: 1_000, key: "ip" })).toBe("policy.m.runtime.rateLimit.points: expected int, received number");
    expect(problem({ points: 1, durationMs: 1_000, key: "sesion" })).toBe('policy.m.runtime.rateLimit.key: Invalid option: expected one of "session"|"user"|"ip"|"global"');
    expect(problem({ points: 1, key: "ip" })).toBe("policy.m.runtime.rateLimit.durationMs: expected number, received undefined");
    expect(problem({ points: 1, durationMs: 1_000, key: "ip", scope: "host" })).toBe('policy.m.runtime.rateLimit.scope: Invalid option: expected one of "process"|"deployment"');
    expect(problem({ points: 1, durationMs: 1_000, key: "ip", duration: 5 })).toBe('policy.m.runtime.rateLimit.duration: unknown key; did you mean "durationMs"?');
    expect(problem([{ points: 1, durationMs: 1_000, key: "ip" }, { points: 1, durationMs: 500, key: "global", scope: "deployment" }])).toBe(
      'policy.m.runtime.rateLimit.1.durationMs: must be at least 1000 ms with scope "deployment"',
    );
    expect(problem([])).toBe("policy.m.runtime.rateLimit: must list at least one limit");
    expect(problem("10/s")).toBe("policy.m.runtime.rateLimit: expected object or array, received string");
  });
});
