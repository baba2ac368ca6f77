/**
 * The probes (docs/guides/deployment.md "Probes"): `GET /health` (kept as it always was),
 * `GET /health/live` and `GET /health/ready`. None needs a session, none is logged, and
 * none calls an upstream. Their 503s are probe states, not error answers: a load balancer
 * or the kubelet reads the status, an operator the small body.
 */
import type { FastifyInstance, FastifyReply } from "fastify";
import { closeWhenBodyIgnored } from "../http/lingering-close.js";
import type { Readiness } from "./readiness.js";

export const LIVE_PATH = "/health/live";
export const READY_PATH = "/health/ready";

/** What the probes need from the server they are part of. */
export interface HealthRouteOptions {
  readiness: Readiness;
}

/**
 * Route config read by the shutdown hook (src/app/http-app.ts): while a server drains,
 * every other request answers 503 SERVICE_UNAVAILABLE, but the probes must still say what
 * they see, or the kubelet would take a draining process for a dead one and kill the
 * calls it is finishing.
 */
export const ANSWERS_WHILE_CLOSING = { answersWhileClosing: true } as const;

export async function healthRoutes(app: FastifyInstance, options: HealthRouteOptions): Promise<void> {
  const { readiness } = options;
  closeWhenBodyIgnored(app);

  app.get("/health", async (_request, reply) => noStore(reply).send({ status: "ok" }));

  // The event loop turned to answer this: that is all liveness may claim. A check of
  // Redis or an upstream here would restart every process when that dependency fails.
  app.get(LIVE_PATH, { config: ANSWERS_WHILE_CLOSING }, async (_request, reply) => noStore(reply).send({ status: "ok" }));

  app.get(READY_PATH, { config: ANSWERS_WHILE_CLOSING }, async (_request, reply) => {
    const body = readiness.status();
    return noStore(reply)
      .code(body.status === "ready" ? 200 : 503)
      .send(body);
  });
}

/** A cached "ready" would keep a load balancer sending to a process that stopped being ready. */
function noStore(reply: FastifyReply): FastifyReply {
  return reply.header("cache-control", "no-store");
}
