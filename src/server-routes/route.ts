/**
 * Routes registered by boot hooks (`registerServerRoute`, docs/guides/server-methods.md "Boot hooks"): every verb
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
import { errorOf, isFromCodeTable, isHttpError } from "../errors/http-error.js";
import { sendRawError } from "../http/send-error.js";
import type { Logger } from "../log/logger.js";
import type { SecretMask } from "../log/mask-secrets.js";
import type { RouteContext } from "../plugin-api/context.js";
import { CallSession } from "../state/call-session.js";
import type { SessionStore } from "../state/session-store.js";

/** What the routes need from the server they are part of. */
export interface ServerRouteOptions {
  log: Logger;
  maskSecrets: SecretMask | null;
  registry: Registry;
  serverRoutes: ServerRoutes;
  sessionChecks: SessionCheck;
  sessionStore: SessionStore;
  config: { trustProxy: boolean; publicOrigin: string | null; session: { maxDataBytes: number } };
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
  let session: CallSession | null = null;
  try {
    session = checked ? await CallSession.open(options.sessionStore, checked.session, options.config.session.maxDataBytes) : null;
  } catch (error) {
    thrown = { error };
    answerThrow(res, request.id, options, error, () => false);
    return;
  }
  const endPending = session ? holdEndUntilSaved(res, session, (error) => (thrown ??= { error })) : () => false;
  const ctx: RouteContext = {
    req,
    res,
    // Made on first use, as for methods: most requests (a tile, an asset) never look.
    get session() {
      return session?.view ?? null;
    },
    csrfOk: checked !== null && SessionCheck.csrfMatches(checked, request.headers["x-app-csrf"]),
    origin,
    secure: target.secure,
    core: target.facade,
    log,
    signal: aborter.signal,
    kind: route.kind,
    itemId: route.id,
    requestId: request.id,
  };
  try {
    await route.handler(ctx, new URL(req.url ?? "/", origin), route.prefix);
  } catch (error) {
    thrown = { error };
    answerThrow(res, request.id, options, error, endPending);
  }
}

/**
 * What the handler changed in the session is saved before its response ends, so the
 * request the browser makes next (after a redirect, say) reads it: `res.end` waits for the
 * save, and a second `res.end` meanwhile changes nothing, as it would not on an ended
 * response. When the response closes without `end` (the viewer left), the changes are
 * saved then. A save that fails is the request's logged error: the viewer gets it (413
 * SESSION_DATA_TOO_LARGE, 503 SESSION_STORE_UNAVAILABLE) when the handler has not written
 * its status yet, else the connection is closed, since the status it wrote would claim a
 * success that was not kept. Returns whether an end is waiting for the save.
 */
function holdEndUntilSaved(res: ServerResponse, session: CallSession, failed: (error: unknown) => void): () => boolean {
  const end = res.end as (...args: unknown[]) => unknown;
  let ending = false;
  let saving: Promise<void> | undefined;
  const save = () => (saving ??= Promise.resolve().then(() => session.save()));
  const finish = (args: unknown[]) => {
    res.end = end as ServerResponse["end"];
    try {
      end.apply(res, args);
    } catch (error) {
      // What Node refuses (a chunk of the wrong type) would have thrown in the handler:
      // answered as that throw would have been.
      failed(error);
      if (!res.headersSent) sendRawError(res, errorOf("INTERNAL_ERROR"));
      else res.destroy();
    }
  };
  res.end = function (...args: unknown[]) {
    if (ending) return res;
    ending = true;
    save().then(
      () => finish(args),
      (error: unknown) => {
        failed(error);
        res.end = end as ServerResponse["end"];
        if (!res.headersSent) sendRawError(res, isHttpError(error) ? error : errorOf("INTERNAL_ERROR"));
        else res.destroy();
      },
    );
    return res;
  } as ServerResponse["end"];
  res.once("close", () => void save().catch(() => {}));
  return () => ending && !res.writableEnded;
}

/**
 * A throw before anything was sent answers 500, or the error itself when it is one of the
 * server's own (a session store that cannot be reached: 503); after, the response cannot be
 * finished cleanly: the socket is closed. A throw after the handler ended its response
 * leaves that answer alone.
 */
function answerThrow(res: ServerResponse, requestId: string, options: ServerRouteOptions, error: unknown, endPending: () => boolean): void {
  if (endPending()) return;
  if (!res.headersSent) {
    const answer = isHttpError(error) && isFromCodeTable(error) ? error : errorOf("INTERNAL_ERROR", { requestId });
    sendRawError(res, answer, { mask: options.maskSecrets });
    return;
  }
  if (!res.writableEnded) res.destroy();
}

function logEvent(log: Logger, event: string, route: ServerRoute, status: number, started: number, err: unknown): void {
  const fields = { event, prefix: route.prefix, status, durationMs: Math.round((performance.now() - started) * 1000) / 1000, err };
  if (event === "route.error") log.error(fields, event);
  else log.info(fields, event);
}
