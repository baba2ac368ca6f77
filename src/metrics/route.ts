/**
 * `GET /metrics` (Prometheus text format), only with `server.metrics.enabled`; otherwise the
 * path is not routed at all. With `server.metrics.token` the scraper must send
 * `Authorization: Bearer <token>`, compared in constant time; anything else answers 401
 * `METRICS_UNAUTHORIZED`. In a cluster worker the answer is the master's aggregate over
 * every worker, so a scrape through the shared port sees the whole cluster, not one process.
 */
import type { FastifyInstance } from "fastify";
import { safeEqual } from "../auth/session.js";
import type { ClusterHooks } from "../core/cluster-hooks.js";
import type { ResolvedConfig } from "../config/resolve.js";
import type { Registry } from "../discovery/registry.js";
import { errorOf } from "../errors/http-error.js";
import { closeWhenBodyIgnored } from "../http/lingering-close.js";
import { sendError } from "../http/send-error.js";
import type { EventListeners } from "../log/events.js";
import type { RpcRuntime } from "../runtime/runtime.js";
import type { InFlightCounter } from "./in-flight.js";

export const METRICS_PATH = "/metrics";

export interface MetricsRouteOptions {
  config: Pick<ResolvedConfig, "metrics" | "proxies">;
  registry: Registry;
  events: EventListeners;
  runtime: RpcRuntime;
  inFlight: InFlightCounter;
  cluster?: ClusterHooks | undefined;
}

export async function metricsRoutes(app: FastifyInstance, options: MetricsRouteOptions): Promise<void> {
  const { config, runtime, inFlight, cluster } = options;
  if (!config.metrics.enabled) return;
  // prom-client costs ~12 MB of memory: loaded only when metrics are on.
  const { createAppMetrics } = await import("./app-metrics.js");
  const metrics = createAppMetrics({
    methods: options.registry,
    proxyAliases: new Set(config.proxies.keys()),
    runtimeStatus: () => runtime.status(),
    inFlight,
  });
  options.events.rpc.push(metrics.onRpcEvent);
  options.events.proxy.push(metrics.onProxyEvent);
  cluster?.serveMetrics(() => metrics.registry.getMetricsAsJSON());

  closeWhenBodyIgnored(app);
  const token = config.metrics.token;
  const expected = token ? `Bearer ${token}` : null;

  app.get(METRICS_PATH, async (request, reply) => {
    if (expected !== null) {
      const given = request.headers.authorization;
      if (typeof given !== "string" || !safeEqual(given, expected)) {
        reply.header("www-authenticate", 'Bearer realm="metrics"');
        return sendError(reply, errorOf("METRICS_UNAUTHORIZED"));
      }
    }
    let body: string;
    try {
      body = cluster ? await cluster.clusterMetrics() : await metrics.registry.metrics();
    } catch (error) {
      request.log.warn({ reqId: request.id, err: error }, "metrics: could not gather the cluster's series");
      return sendError(reply, errorOf("METRICS_UNAVAILABLE"));
    }
    return reply.header("cache-control", "no-store").type(metrics.registry.contentType).send(body);
  });
}
