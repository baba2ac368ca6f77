// docs/reference/configuration.md, server.redis: its defaults, the lease of deployment-wide slots,
// and a password in the URL kept out of every log line (docs/guides/deployment.md "Shared state
// and Redis").
import { describe, expect, it } from "vitest";
import { parseConfig } from "../../dist/config/load.js";

describe("server.redis", () => {
  it("is null when unset, and fills keyPrefix, commandTimeoutMs and leaseMs", () => {
    expect(parseConfig({}, {}).redis).toBeNull();
    expect(parseConfig({ server: { redis: { url: "redis://cache:6379" } } }, {}).redis).toEqual({
      url: "redis://cache:6379",
      keyPrefix: "counterpart:",
      commandTimeoutMs: 1_000,
      leaseMs: 10_000,
    });
    expect(parseConfig({ server: { redis: { url: "rediss://cache", keyPrefix: "a:", commandTimeoutMs: 50, leaseMs: 2_000 } } }, {}).redis).toMatchObject({ keyPrefix: "a:", commandTimeoutMs: 50, leaseMs: 2_000 });
  });

  it("refuses a lease under 100 ms, a URL of another scheme and unknown keys, naming the key", () => {
    expect(() => parseConfig({ server: { redis: { url: "redis://cache", leaseMs: 10 } } }, {})).toThrow(/server\.redis\.leaseMs/);
    expect(() => parseConfig({ server: { redis: { url: "http://cache" } } }, {})).toThrow(/server\.redis\.url/);
    expect(() => parseConfig({ server: { redis: { url: "redis://cache", password: "x" } } }, {})).toThrow(/server\.redis/);
  });

  it("counts the URL's password among the secrets the logs mask, as written and decoded", () => {
    const { secrets } = parseConfig({ server: { redis: { url: "redis://user:p%40ss-word@cache:6379/0" } } }, {});
    expect(secrets).toContain("p%40ss-word");
    expect(secrets).toContain("p@ss-word");
    expect(parseConfig({ server: { redis: { url: "redis://cache:6379" } } }, {}).secrets).toEqual([]);
  });
});
