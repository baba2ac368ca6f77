/**
 * `GET /metrics` (Prometheus text format), only with `server.metrics.enabled`; otherwise the
 * path is not routed at all. With `server.metrics.token` the scraper must send
 * `Authorization: Bearer <token>`, compared in constant time; anything else answers 401
 * `METRICS_UNAUTHORIZED`. In a cluster worker the answer is the master's aggregate over
 * every worker, so a scrape through the shared port sees the whole cluster, not one process.
 *
 * From the start the request path records into plain cells (./call-recorder.ts); prom-client
 * (~12 MB) and the registry that reads the cells load with the first scrape.
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
import type { SessionStoreMeter } from "../state/measured-session-store.js";
import type { SessionStore } from "../state/session-store.js";
import type { Registry as PromRegistry } from "prom-client";
import { CallRecorder } from "./call-recorder.js";
import type { InFlightCounter } from "./in-flight.js";

export const METRICS_PATH = "/metrics";

export interface MetricsRouteOptions {
  config: Pick<ResolvedConfig, "metrics" | "proxies">;
  registry: Registry;
  events: EventListeners;
  runtime: RpcRuntime;
  inFlight: InFlightCounter;
  cluster?: ClusterHooks | undefined;
  sessionStore: SessionStore;
  /** Timings and errors of `sessionStore`'s loads and saves, recorded when metrics are on. */
  sessionMeter: SessionStoreMeter | null;
}

export async function metricsRoutes(app: FastifyInstance, options: MetricsRouteOptions): Promise<void> {
  const { config, runtime, inFlight, cluster } = options;
  if (!config.metrics.enabled) return;
  const calls = new CallRecorder(options.registry, new Set(config.proxies.keys()));
  options.events.rpc.push(calls.onRpcEvent);
  options.events.proxy.push(calls.onProxyEvent);
  let registry: Promise<PromRegistry> | null = null;
  const metrics = () =>
    (registry ??= import("./app-metrics.js").then(({ createAppMetrics }) =>
      createAppMetrics({
        calls,
        runtimeStatus: () => runtime.status(),
        streamsStarted: () => runtime.streamsStarted(),
        breakerTransitions: () => runtime.breakerTransitions(),
        inFlight,
        sessionStore: options.sessionStore,
        sessionMeter: options.sessionMeter,
      }),
    ));
  cluster?.serveMetrics(async () => (await metrics()).getMetricsAsJSON());

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
    let contentType: string;
    try {
      const own = await metrics();
      contentType = own.contentType;
      body = cluster ? await cluster.clusterMetrics() : await own.metrics();
    } catch (error) {
      request.log.warn({ reqId: request.id, err: error }, "metrics: could not gather the cluster's series");
      return sendError(reply, errorOf("METRICS_UNAVAILABLE"));
    }
    return reply.header("cache-control", "no-store").type(contentType).send(body);
  });
}
