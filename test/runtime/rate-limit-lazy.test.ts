// docs/guides/server-methods.md "Rate limits", cost: a server without any `rateLimit` never loads
// rate-limiter-flexible; one with a limit loads it with the first call a limit counts. Its own file: vitest gives each
// file a fresh process, so nothing else loaded it.
import { createRequire } from "node:module";
import { join } from "node:path";
import { expect, it } from "vitest";
import { openViewer, rpc } from "../helpers/http.js";
import { startServer } from "../helpers/server.js";

const require = createRequire(import.meta.url);
const limiterLoaded = () => Object.keys(require.cache).some((path) => path.includes("/node_modules/rate-limiter-flexible/"));

it("loads rate-limiter-flexible only for a server that has a rate limit, at its first limited call", async () => {
  const plain = await startServer({ root: join(import.meta.dirname, "../fixtures/shared-app"), config: {} });
  try {
    const viewer = await openViewer(plain.url);
    for (let i = 0; i < 3; i++) expect((await rpc(plain.url, "plugin/gpu/pid", { viewer })).status).toBe(200);
    expect(limiterLoaded()).toBe(false);
  } finally {
    await plain.close();
  }
  const limited = await startServer({ root: join(import.meta.dirname, "../fixtures/ratelimit-app"), config: {} });
  try {
    expect(limiterLoaded()).toBe(false);
    const viewer = await openViewer(limited.url);
    expect((await rpc(limited.url, "plugin/chat/everyone", { viewer })).status).toBe(200);
    expect(limiterLoaded()).toBe(true);
  } finally {
    await limited.close();
  }
});
