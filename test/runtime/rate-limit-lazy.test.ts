// docs/guides/server-methods.md "Rate limits", cost: limits counted in the process never load
// rate-limiter-flexible; a deployment-wide limit on Redis loads it with the first call such a
// limit counts. Its own file: vitest gives each file a fresh process, so nothing else loaded it.
import { createRequire } from "node:module";
import { join } from "node:path";
import { expect, it } from "vitest";
import { openViewer, rpc } from "../helpers/http.js";
import { describeWithRedis, startRedis } from "../helpers/redis.js";
import { startServer } from "../helpers/server.js";

const require = createRequire(import.meta.url);
const limiterLoaded = () => Object.keys(require.cache).some((path) => path.includes("/node_modules/rate-limiter-flexible/"));
const RATELIMIT_APP = join(import.meta.dirname, "../fixtures/ratelimit-app");

describeWithRedis("rate-limiter-flexible", () => {
  it("stays unloaded for limits counted in the process, and loads with the first call a Redis limit counts", async () => {
    const plain = await startServer({ root: join(import.meta.dirname, "../fixtures/shared-app"), config: {} });
    try {
      const viewer = await openViewer(plain.url);
      for (let i = 0; i < 3; i++) expect((await rpc(plain.url, "plugin/gpu/pid", { viewer })).status).toBe(200);
      expect(limiterLoaded()).toBe(false);
    } finally {
      await plain.close();
    }
    // No Redis: every limit, `scope: "deployment"` too, counts in this process.
    const local = await startServer({ root: RATELIMIT_APP, config: {} });
    try {
      const viewer = await openViewer(local.url);
      expect((await rpc(local.url, "plugin/chat/everyone", { viewer })).status).toBe(200);
      expect((await rpc(local.url, "plugin/chat/shared", { viewer })).status).toBe(200);
      expect(limiterLoaded()).toBe(false);
    } finally {
      await local.close();
    }
    const redis = await startRedis();
    const shared = await startServer({ root: RATELIMIT_APP, config: { server: { redis: { url: redis.url, keyPrefix: "rl-lazy:" } } } });
    try {
      const viewer = await openViewer(shared.url);
      expect((await rpc(shared.url, "plugin/chat/everyone", { viewer })).status).toBe(200);
      expect(limiterLoaded()).toBe(false);
      expect((await rpc(shared.url, "plugin/chat/shared", { viewer })).status).toBe(200);
      expect(limiterLoaded()).toBe(true);
    } finally {
      await shared.close();
      await redis.stop();
    }
  });
});
