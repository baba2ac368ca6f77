// docs/reference/project.md "Dependencies": prom-client (~12 MB) loads with the first /metrics call. Until then
// the request path records into plain numbers, and what it recorded is all in the first
// scrape. Its own file: vitest gives each file a fresh process, so nothing else loaded it.
import { createRequire } from "node:module";
import { expect, it } from "vitest";
import { rpc } from "../helpers/http.js";
import { sample, scrape } from "../helpers/metrics.js";
import { useServer } from "../helpers/server.js";
import { CLUSTER_APP } from "../helpers/cluster.js";

const require = createRequire(import.meta.url);
const promClientLoaded = () => Object.keys(require.cache).some((path) => path.includes("/node_modules/prom-client/"));

const app = useServer({ root: CLUSTER_APP, config: { server: { metrics: { enabled: true } } } });

it("loads prom-client with the first scrape, which still counts every call made before it", async () => {
  // `recall` reads ctx.session: each call loads its data, and that is timed too.
  for (let i = 0; i < 3; i++) expect((await rpc(app.url, "plugin/cl/recall", { viewer: app.viewer })).status).toBe(200);
  expect(promClientLoaded()).toBe(false);
  const text = await scrape(app.url);
  expect(promClientLoaded()).toBe(true);
  expect(sample(text, "app_rpc_calls_total", { kind: "plugin", id: "cl", method: "recall", code: "OK" })).toBe(3);
  expect(sample(text, "app_session_store_duration_seconds_count", { kind: "memory", operation: "load" })).toBe(3);
});
