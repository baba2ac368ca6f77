/**
 * Routes registered by boot hooks (`registerServerRoute`, README "Boot hooks"): every verb
 * on the prefix and below it reaches `handler(ctx, url, prefix)`, which owns the response.
 * They take precedence over static files and the viewer page, the longest prefix first
 * (Fastify's router prefers the more specific path). The body is left unread for the
 * handler. Exactly one log event per request: `route.complete` or `route.error`.
 */
import type { ServerResponse } from "node:http";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { requestOrigin } from "../auth/origin.js";
import { SessionCheck } from "../auth/session-cache.js";
import { readSessionCookie } from "../auth/session-cookie.js";
import type { Registry } from "../discovery/registry.js";
import type { ServerRoute, ServerRoutes } from "../discovery/server-routes.js";
import { errorOf } from "../errors/http-error.js";
import { sendRawError } from "../http/send-error.js";
import type { Logger } from "../log/logger.js";
import type { SecretMask } from "../log/mask-secrets.js";
import type { RouteContext } from "../plugin-api/context.js";

/** What the routes need from the server they are part of. */
export interface ServerRouteOptions {
  log: Logger;
  maskSecrets: SecretMask | null;
  registry: Registry;
  serverRoutes: ServerRoutes;
  sessionChecks: SessionCheck;
  config: { trustProxy: boolean; publicOrigin: string | null };
}

export async function serverRouteHandlers(app: FastifyInstance, options: ServerRouteOptions): Promise<void> {
  const routes = options.serverRoutes.all();
  if (routes.length === 0) return;
  // The handler reads the body itself, if it wants it.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser("*", (_request: FastifyRequest, _payload: unknown, done: (error: null, body: undefined) => void) => done(null, undefined));
  for (const route of routes) {
    const handler = (request: FastifyRequest, reply: FastifyReply) => dispatch(route, request, reply, options);
    app.route({ method: app.supportedMethods, url: route.prefix, handler });
    app.route({ method: app.supportedMethods, url: `${route.prefix}/*`, handler });
  }
}

async function dispatch(route: ServerRoute, request: FastifyRequest, reply: FastifyReply, options: ServerRouteOptions): Promise<void> {
  reply.hijack();
  const started = performance.now();
  const req = request.raw;
  const res = reply.raw;
  const log = options.log.child({ reqId: request.id, kind: route.kind, id: route.id });
  const target = options.registry.target(route.kind, route.id);
  if (!target || target.failure) {
    sendRawError(res, errorOf("RPC_TARGET_UNAVAILABLE"));
    logEvent(log, "route.error", route, 503, started, undefined);
    return;
  }
  const aborter = new AbortController();
  let thrown: { error: unknown } | undefined;
  // Logged when the response is over, however the handler ended it (it may answer after returning).
  res.once("close", () => {
    if (!res.writableFinished) aborter.abort(new Error("Client disconnected"));
    const status = res.writableFinished ? res.statusCode : 499;
    logEvent(log, thrown || status >= 500 ? "route.error" : "route.complete", route, status, started, thrown?.error);
  });
  const encrypted = Boolean((req.socket as { encrypted?: boolean }).encrypted);
  const origin = options.config.publicOrigin ?? requestOrigin(request.headers, encrypted, options.config.trustProxy);
  const checked = options.sessionChecks.session(readSessionCookie(request.headers));
  const ctx: RouteContext = {
    req,
    res,
    session: checked ? { id: checked.session.id, createdAt: checked.session.createdAt } : null,
    csrfOk: checked !== null && SessionCheck.csrfMatches(checked, request.headers["x-app-csrf"]),
    origin,
    secure: target.secure,
    core: target.facade,
    log,
    signal: aborter.signal,
    kind: route.kind,
    itemId: route.id,
  };
  try {
    await route.handler(ctx as never, new URL(req.url ?? "/", origin), route.prefix);
  } catch (error) {
    thrown = { error };
    answerThrow(res, request.id, options);
  }
}

/** A throw before anything was sent answers 500; after, the response cannot be finished cleanly: the socket is closed. */
function answerThrow(res: ServerResponse, requestId: string, options: ServerRouteOptions): void {
  if (!res.headersSent) {
    sendRawError(res, errorOf("INTERNAL_ERROR", { requestId }), { mask: options.maskSecrets });
    return;
  }
  if (!res.writableEnded) res.destroy();
}

function logEvent(log: Logger, event: string, route: ServerRoute, status: number, started: number, err: unknown): void {
  const fields = { event, prefix: route.prefix, status, durationMs: Math.round((performance.now() - started) * 1000) / 1000, err };
  if (event === "route.error") log.error(fields, event);
  else log.info(fields, event);
}
