/**
 * A session store that hangs (docs/guides/sessions-and-state.md, docs/guides/deployment.md "What each failure
 * looks like to a viewer"): a real Redis paused with CLIENT PAUSE keeps its connection and
 * answers nothing. Calls that never touch session data must not each wait out
 * `commandTimeoutMs`: after the first finds the store unreachable, the next ones get on at
 * once for a second, and the store is tried again after that.
 */
import { expect, it } from "vitest";
import { join } from "node:path";
import { Redis } from "ioredis";
import { openViewer, rpc } from "../helpers/http.js";
import { startServer } from "../helpers/server.js";
import { describeWithRedis, useRedis } from "../helpers/redis.js";

const ROOT = join(import.meta.dirname, "../fixtures/session-app");

describeWithRedis("a Redis that hangs", () => {
  const redis = useRedis();

  it("holds up one call for commandTimeoutMs, not every call; data calls answer 503 meanwhile", async () => {
    const app = await startServer({ root: ROOT, config: { server: { redis: { url: redis.url, commandTimeoutMs: 1_500 } }, plugins: { notes: {} } } });
    const admin = new Redis(redis.url);
    try {
      const viewer = await openViewer(app.url);
      expect((await rpc(app.url, "plugin/notes/renameSession", { viewer })).status).toBe(200);
      await admin.call("CLIENT", "PAUSE", "4000", "ALL");
      // The first call after the pause waits for the store's timeout, then goes on without it.
      expect((await rpc(app.url, "plugin/notes/renameSession", { viewer })).status).toBe(200);
      const started = performance.now();
      const answers = await Promise.all([
        rpc(app.url, "plugin/notes/renameSession", { viewer }),
        rpc(app.url, "plugin/notes/renameSession", { viewer }),
        rpc(app.url, "plugin/notes/recall", { viewer, body: { args: ["color"] } }),
      ]);
      const took = performance.now() - started;
      expect(answers.map((answer) => answer.status)).toEqual([200, 200, 503]);
      expect(answers[2]!.body.code).toBe("SESSION_STORE_UNAVAILABLE");
      // Not another 1.5 s each: they did not wait for the store at all.
      expect(took).toBeLessThan(1_000);
    } finally {
      admin.disconnect();
      await app.close();
    }
  });
});
