// The proxy loads undici's Pool alone, at its first request, not undici's index
// (src/proxy/undici-pool.ts), and
// the outbound guard loads the index on its first call: about 7 MB of resident memory a
// server that never calls safeFetch does not pay.
import { execFile } from "node:child_process";
import { createRequire } from "node:module";
import { join } from "node:path";
import { promisify } from "node:util";
import { Pool } from "undici";
import { describe, expect, it } from "vitest";
import { POOL_MODULE } from "../../src/proxy/undici-pool.js";

const SCRIPT = join(import.meta.dirname, "../fixtures/scripts/undici-loading.mjs");

describe("undici loading", () => {
  it("finds undici's own Pool at the path the proxy requires", () => {
    // Fails when an undici upgrade moves the file: the proxy would still work through its
    // fallback, but would load undici's whole index again.
    expect(createRequire(import.meta.url)(POOL_MODULE)).toBe(Pool);
  });

  it("loads the Pool with the first proxied request, forwards without undici's index, and safeFetch loads it on first use", async () => {
    const { stdout } = await promisify(execFile)(process.execPath, [SCRIPT], { timeout: 20_000 });
    expect(JSON.parse(stdout)).toEqual({
      poolAtStart: false,
      poolAfterProxy: true,
      proxied: "200 upstream saw /hello",
      indexAfterProxy: false,
      fetched: "200 upstream saw /out",
      indexAfterSafeFetch: true,
    });
  });
});
