/**
 * `GET /metrics` (Prometheus text format), only with `server.metrics.enabled`; otherwise the
 * path is not routed at all. With `server.metrics.token` the scraper must send
 * `Authorization: Bearer <token>`, compared in constant time; anything else answers 401
 * `METRICS_UNAUTHORIZED`. In a cluster worker the answer is the master's aggregate over
 * every worker, so a scrape through the shared port sees the whole cluster, not one process.
 * May import auth/, errors/, rpc/ and server/ types, server/lingering-close, and the cluster
 * hooks' types.
 */
import type { FastifyInstance, FastifyReply } from "fastify";
import { safeEqual } from "../auth/session.js";
import type { ClusterHooks } from "../cluster/hooks.js";
import { errorOf, type RpcError } from "../errors/http-error.js";
import type { RpcRuntime } from "../runtime/runtime.js";
import type { ServerCore } from "../server/core.js";
import { closeWhenBodyIgnored } from "../server/lingering-close.js";
import type { InFlightCounter } from "./in-flight.js";

export const METRICS_PATH = "/metrics";

export interface MetricsRouteOptions {
  core: ServerCore;
  runtime: RpcRuntime;
  inFlight: InFlightCounter;
  cluster?: ClusterHooks | undefined;
}

export async function metricsRoutes(app: FastifyInstance, options: MetricsRouteOptions): Promise<void> {
  const { core, runtime, inFlight, cluster } = options;
  if (!core.config.metrics.enabled) return;
  // prom-client costs ~12 MB of memory: loaded only when metrics are on.
  const { createAppMetrics } = await import("./app-metrics.js");
  const metrics = createAppMetrics({
    methods: core.registry,
    proxyAliases: new Set(core.config.proxies.keys()),
    runtimeStatus: () => runtime.status(),
    inFlight,
  });
  core.rpcEventListeners.push(metrics.onRpcEvent);
  core.proxyEventListeners.push(metrics.onProxyEvent);
  cluster?.serveMetrics(() => metrics.registry.getMetricsAsJSON());

  closeWhenBodyIgnored(app);
  const token = core.config.metrics.token;
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
      request.log.warn({ err: error }, "metrics: could not gather the cluster's series");
      return sendError(reply, errorOf("SERVICE_UNAVAILABLE", { reason: "metrics-unavailable" }, "Metrics are not available right now"));
    }
    return reply.header("cache-control", "no-store").type(metrics.registry.contentType).send(body);
  });
}

function sendError(reply: FastifyReply, error: RpcError) {
  return reply.code(error.status).type("application/json; charset=utf-8").send(JSON.stringify(error.toJSON()));
}
