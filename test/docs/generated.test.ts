/**
 * The reference tables whose truth is the code (README "The docs"): what `npm run docs`
 * (scripts/docs.mjs) writes from the built dist/ is what is committed, so that a key, a
 * policy field, an error code, a command or a metric added to the code without its page
 * fails here. Run `npm run build && npm run docs` and commit the pages.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { REPO } from "../helpers/process.js";
import { resolveConfig } from "../../dist/config/resolve.js";
// @ts-expect-error: a plain script, without types
import { renderDocs } from "../../scripts/docs.mjs";

const rendered = (await renderDocs()) as Map<string, string>;

describe("the generated reference pages", () => {
  it("are the five pages, each saying it is generated and by what", () => {
    expect([...rendered.keys()].sort()).toEqual([
      "docs/reference/cli.md",
      "docs/reference/configuration.md",
      "docs/reference/error-codes.md",
      "docs/reference/metrics.md",
      "docs/reference/policy.md",
    ]);
    for (const text of rendered.values()) expect(text.split("\n").slice(0, 6).join("\n")).toMatch(/Generated.*by `npm run docs` \(scripts\/docs\.mjs\)/);
  });

  for (const [page, text] of rendered) {
    it(`${page} is what scripts/docs.mjs writes from the code`, () => {
      expect(readFileSync(join(REPO, page), "utf8")).toBe(text);
    });
  }

  it("list every config key, policy field, error code and metric the code has", () => {
    expect(rendered.get("docs/reference/configuration.md")).toContain("| `server.redis.leaseMs` | integer |");
    expect(rendered.get("docs/reference/policy.md")).toContain("| `runtime.files.maxFileBytes` | integer |");
    expect(rendered.get("docs/reference/error-codes.md")).toContain("| `RPC_BAD_INPUT` | 400 |");
    expect(rendered.get("docs/reference/error-codes.md")).toContain("| `STARTUP_LISTEN_FAILED` |");
    expect(rendered.get("docs/reference/metrics.md")).toContain("| `app_session_store_circuit_open` | gauge |");
    expect(rendered.get("docs/reference/metrics.md")).toContain("| `app_cluster_worker_restarts` | gauge |");
    expect(rendered.get("docs/reference/cli.md")).toContain("| `counterpart init [dir]` |");
  });
});

describe("the configuration reference's defaults", () => {
  // The default cell of each key, as the page shows it ("1048576 (1 MiB)" reads 1048576).
  const table = rendered.get("docs/reference/configuration.md")!;
  const shown = new Map([...table.matchAll(/^\| `([^`]+)` \| (?:[^|\\]|\\.)+ \| ([^|]+) \|/gm)].map((match) => [match[1]!, match[2]!.trim().split(" (")[0]]));
  const resolved = resolveConfig({ server: { redis: { url: "redis://127.0.0.1:6379" } } }, {}, "test");
  const cases: Array<[string, unknown]> = [
    ["server.trustProxy", resolved.trustProxy],
    ["server.shutdownTimeoutMs", resolved.shutdownTimeoutMs],
    ["server.strictStartup", resolved.strictStartup],
    ["server.requestId.trustIncoming", resolved.requestId.trustIncoming],
    ["server.traceContext.trustIncoming", resolved.traceContext.trustIncoming],
    ["server.session.ttlSec", resolved.sessionTtlSec],
    ["server.session.maxDataBytes", resolved.session.maxDataBytes],
    ["server.session.store.maxEntries", resolved.session.maxEntries],
    ["server.session.store.maxBytes", resolved.session.maxBytes],
    ["server.redis.keyPrefix", resolved.redis!.keyPrefix],
    ["server.redis.commandTimeoutMs", resolved.redis!.commandTimeoutMs],
    ["server.redis.leaseMs", resolved.redis!.leaseMs],
    ["server.rpc.expose", resolved.rpc.expose],
    ["server.rpc.maxBodyBytes", resolved.rpc.maxBodyBytes],
    ["server.rpc.timeoutMs", resolved.rpc.timeoutMs],
    ["server.rpc.streamHeartbeatMs", resolved.rpc.streamHeartbeatMs],
    ["server.rpc.validateOutput", resolved.rpc.validateOutput],
    ["server.outbound.timeoutMs", resolved.outbound.timeoutMs],
    ["server.metrics.enabled", resolved.metrics.enabled],
  ];

  it.each(cases)("%s is what the server takes when the key is left out", (key, value) => {
    expect(shown.get(key)).toBe(JSON.stringify(value));
  });
});
