// docs/guides/browser.md "Retries and timeouts" against a real rate limit (docs/guides/server-methods.md "Rate
// limits"): a 429 RPC_RATE_LIMITED is retried once its Retry-After has passed, and
// succeeds; one whose Retry-After is beyond the client's 60 s cap rejects at once, since
// any earlier retry is refused for sure.
import { expect, it } from "vitest";
import { join } from "node:path";
import { useServerPage } from "../helpers/server-page.js";
import { describeInBrowser, type PageWindow } from "../helpers/browser.js";

const ROOT = join(import.meta.dirname, "../fixtures/ratelimit-app");

describeInBrowser("browser client and rate limits", () => {
  const serverPage = useServerPage({ root: ROOT });

  const refusals = (method: string) => serverPage.app.logs.events("rpc.rejected").filter((event) => event.method === method && event.code === "RPC_RATE_LIMITED").length;

  it("waits as Retry-After says, retries once, and resolves", async () => {
    const outcome = await serverPage.page.evaluate(async () => {
      const w = globalThis as unknown as PageWindow;
      await w.xserver.plugin.chat.tell("one");
      await w.xserver.plugin.chat.tell("two");
      const started = performance.now();
      const result = await w.xserver.plugin.chat.tell("three");
      return { result, waitedMs: performance.now() - started };
    });
    expect(outcome.result).toEqual({ told: "three" });
    // The window is 1.5 s: Retry-After says 1 or 2 s, and the one retry came after it.
    expect(outcome.waitedMs).toBeGreaterThanOrEqual(900);
    expect(refusals("tell")).toBe(1);
  });

  it("rejects at once with RPC_RATE_LIMITED when Retry-After is beyond its 60 s cap", async () => {
    const outcome = await serverPage.page.evaluate(async () => {
      const w = globalThis as unknown as PageWindow;
      await w.xserver.plugin.chat.hourly();
      const started = performance.now();
      try {
        await w.xserver.plugin.chat.hourly();
        return null;
      } catch (error) {
        const e = error as { status: number; code: string; details: { retryAfterMs: number } };
        return { status: e.status, code: e.code, retryAfterMs: e.details.retryAfterMs, tookMs: performance.now() - started };
      }
    });
    expect(outcome).toMatchObject({ status: 429, code: "RPC_RATE_LIMITED" });
    expect(outcome!.retryAfterMs).toBeGreaterThan(3_500_000);
    expect(outcome!.tookMs).toBeLessThan(2_000);
    expect(refusals("hourly")).toBe(1);
  });
});
