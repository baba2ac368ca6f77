/**
 * The proxy: `/proxy/<alias>/<path>?<query>` (docs/guides/proxy.md). The first failing
 * check answers, in this order:
 *   method → session → CSRF → alias → path → rate limits → headers → verifiers → `user`
 *     rate limits → forward (502 / 504)
 * and every request logs exactly one event: `proxy.complete`, `proxy.error` or
 * `proxy.rejected`.
 */
import type { ServerResponse } from "node:http";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { readSessionCookie } from "../auth/session-cookie.js";
import type { ResolvedConfig } from "../config/resolve.js";
import { errorOf, type HttpError } from "../errors/http-error.js";
import { resolveRateLimits } from "../discovery/policy.js";
import { userSubOf, type RateLimits, type RateLimitStep } from "../runtime/rate-limit.js";
import type { ErrorCode } from "../errors/codes.js";
import { sendError, sendRawError } from "../http/send-error.js";
import type { EventListeners } from "../log/events.js";
import { EventLog } from "../log/event-line.js";
import { ClientGoneError, Upstreams, forward, type ForwardOutcome } from "./forward.js";
import {
  applyStaticHeaders,
  applyTraceHeaders,
  changedNames,
  MAX_FORWARDED_HEADER_BYTES,
  MAX_FORWARDED_HEADERS,
  upstreamRequestHeaders,
} from "./headers.js";
import { SessionCheck } from "../auth/session-cache.js";
import { isSafeProxyPath, splitProxyUrl, upstreamPath } from "./target.js";
import { verifyProxyAuth, type ProxyAuthDeps } from "./verify-proxy-auth.js";
import type { UpstreamState } from "../auth/verifier-types.js";
import { RequestTrace } from "../tracing/request-trace.js";

export const PROXY_METHODS = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"] as const;
const ALLOWED = new Set<string>(PROXY_METHODS);
const ALLOW = { allow: PROXY_METHODS.join(", ") };
const HEADER_LIMITS = { maxHeaders: MAX_FORWARDED_HEADERS, maxHeaderBytes: MAX_FORWARDED_HEADER_BYTES };

interface ProxyEvent {
  reqId: string;
  alias: string | null;
  method: string;
  startedAt: number;
  /** The request's span, and the trace the upstream request continues. */
  trace: RequestTrace;
}

/** What the proxy needs from the server it is part of. */
export interface ProxyRouteOptions extends ProxyAuthDeps {
  config: Pick<ResolvedConfig, "proxies" | "trustProxy" | "jwt" | "traceContext">;
  sessionChecks: SessionCheck;
  events: EventListeners;
  /** The counters of aliases with a `rateLimit` (docs/guides/proxy.md "Rate limits"). */
  rateLimits: RateLimits;
}

export async function proxyRoutes(app: FastifyInstance, options: ProxyRouteOptions): Promise<void> {
  const upstreams = new Upstreams(options.config.proxies);
  const trustProxy = options.config.trustProxy;
  const sessions = options.sessionChecks;
  const trustTraceContext = options.config.traceContext.trustIncoming;
  const eventLog = new EventLog(options.log, PROXY_EVENT_FIELDS);
  app.addHook("onClose", async () => upstreams.close());
  // Decided once: an alias without a `rateLimit` has no step.
  const limitsByAlias = new Map<string, RateLimitStep>();
  for (const [alias, proxy] of options.config.proxies) {
    const limits = resolveRateLimits(proxy.rateLimit);
    if (limits) limitsByAlias.set(alias, options.rateLimits.step(limits, `proxy/${alias}`, "PROXY_RATE_LIMITED"));
  }

  // Request bodies are streamed upstream untouched: Fastify must not read them.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser("*", (_request, _payload, done) => done(null, undefined));

  async function handle(request: FastifyRequest, reply: FastifyReply) {
    const trace = RequestTrace.start(request.headers, trustTraceContext, "proxy", "client");
    if (trace.recording) trace.setAttributes({ "http.request.method": request.method, "counterpart.request_id": request.id });
    const event: ProxyEvent = { reqId: request.id, alias: null, method: request.method, startedAt: performance.now(), trace };
    if (!ALLOWED.has(request.method)) return reject(reply, event, "PROXY_METHOD_NOT_ALLOWED");
    const session = sessions.session(readSessionCookie(request.headers));
    if (!session) return reject(reply, event, "PROXY_NO_SESSION");
    if (!SessionCheck.csrfMatches(session, request.headers["x-app-csrf"])) return reject(reply, event, "PROXY_BAD_CSRF");

    const target = splitProxyUrl(request.raw.url ?? "");
    const upstream = target.alias === null ? undefined : upstreams.get(target.alias);
    if (!upstream) return reject(reply, event, "PROXY_UNKNOWN_ALIAS");
    event.alias = upstream.alias;
    // Named by a configured alias only, and never with the path or query: they may carry keys.
    if (trace.recording) {
      trace.rename(`proxy ${upstream.alias}`);
      trace.setAttributes(upstream.spanAttributes);
    }
    const path = isSafeProxyPath(target.rawPath) ? upstreamPath(upstream.base, target.rawPath, target.query) : null;
    if (path === null) return reject(reply, event, "PROXY_BAD_PATH");
    const limits = limitsByAlias.get(upstream.alias);
    const sessionId = session.session.id;
    if (limits?.early) {
      const refused = await limits.check(false, sessionId, request.ip, null);
      if (refused) return reject(reply, event, refused);
    }

    const clientHeaders = upstreamRequestHeaders(request.raw, { trustProxy });
    if (clientHeaders === null) return reject(reply, event, "PROXY_HEADERS_TOO_LARGE", HEADER_LIMITS);
    const state: UpstreamState = { headers: clientHeaders, targetPath: `/${target.rawPath}${target.query}` };
    applyTraceHeaders(state.headers, request.id, trace.context);
    let verifierNames: Set<string> | null = null;
    if (upstream.authEnabled) {
      const before = Object.assign(Object.create(null) as Record<string, string>, state.headers);
      const passed = await verifyProxyAuth(request.raw, reply.raw, options, upstream.alias, upstream.config, state, request.id);
      // The client left while a verifier was busy, or a verifier answered by itself.
      if (reply.raw.destroyed || reply.raw.headersSent) {
        reply.hijack();
        logEvent("proxy.error", event, reply.raw.headersSent ? reply.raw.statusCode : 499, "PROXY_CLIENT_CLOSED");
        return reply;
      }
      if (!passed) return reject(reply, event, "PROXY_AUTH_FAILED");
      verifierNames = changedNames(before, state.headers);
    }
    if (limits?.late) {
      // A verifier such as `jwt` puts the caller's claims on `req.user`.
      const refused = await limits.check(true, sessionId, request.ip, userSubOf((request.raw as { user?: unknown }).user));
      if (refused) return reject(reply, event, refused);
    }
    applyStaticHeaders(state.headers, upstream.staticHeaders);

    reply.hijack();
    forward({
      upstream,
      method: request.method,
      path,
      headers: state.headers,
      verifierNames,
      req: request.raw,
      res: reply.raw,
      done: (outcome) => finish(reply.raw, event, outcome),
    });
    return reply;
  }

  function reject(reply: FastifyReply, event: ProxyEvent, refusal: ErrorCode | HttpError, details?: Record<string, unknown>): FastifyReply {
    const error = typeof refusal === "string" ? errorOf(refusal, details) : refusal;
    const code = error.code;
    logEvent("proxy.rejected", event, error.status, code);
    // Refused before forwarding: an upload is never read (the sender closes the connection
    // once the client has the answer, unless the body is small enough to drain).
    return sendError(reply, error, { headers: code === "PROXY_METHOD_NOT_ALLOWED" ? ALLOW : undefined });
  }

  function finish(res: ServerResponse, event: ProxyEvent, outcome: ForwardOutcome): void {
    if (!outcome.error) {
      logEvent("proxy.complete", event, outcome.status ?? 0);
      return;
    }
    if (outcome.clientGone) {
      logEvent("proxy.error", event, outcome.status ?? 499, "PROXY_CLIENT_CLOSED");
      return;
    }
    const reason = reasonOf(outcome.error);
    if (outcome.status !== null) {
      // The answer was under way: the client connection has been cut.
      logEvent("proxy.error", event, outcome.status, "PROXY_UPSTREAM_ERROR", reason);
      return;
    }
    const error = errorOf(isTimeout(outcome.error) ? "PROXY_UPSTREAM_TIMEOUT" : "PROXY_UPSTREAM_ERROR");
    logEvent("proxy.error", event, error.status, error.code, reason);
    sendRawError(res, error);
  }

  function logEvent(name: string, event: ProxyEvent, status: number, code?: string, reason?: string): void {
    // Never the query string or header values: they may carry tokens and personal data.
    const durationMs = Math.round((performance.now() - event.startedAt) * 1000) / 1000;
    // One shape for every event (pino leaves out undefined fields), as for RPC calls.
    const fields = { event: name, reqId: event.reqId, traceId: event.trace.traceId, alias: event.alias, method: event.method, status, durationMs, code, reason };
    eventLog.write(status >= 500 && name === "proxy.error" ? "error" : name === "proxy.complete" ? "info" : "warn", fields, name);
    event.trace.end(status, code);
    const listeners = options.events.proxy;
    if (listeners.length === 0) return;
    const record = { event: name, alias: event.alias, method: event.method, status, code, durationMs };
    for (const listener of listeners) listener(record);
  }

  // Every verb Fastify routes, so that the others answer 405 in the proxy's own shape.
  app.route({ method: app.supportedMethods, url: "/proxy", handler: handle });
  app.route({ method: app.supportedMethods, url: "/proxy/*", handler: handle });
}

/** The fields of every proxied request's event, in the order `logEvent` writes them. */
const PROXY_EVENT_FIELDS = ["event", "reqId", "traceId", "alias", "method", "status", "durationMs", "code", "reason"];

function isTimeout(error: Error): boolean {
  const code = (error as { code?: unknown }).code;
  return code === "UND_ERR_HEADERS_TIMEOUT" || code === "UND_ERR_CONNECT_TIMEOUT";
}

function reasonOf(error: Error): string {
  if (error instanceof ClientGoneError) return error.code;
  const code = (error as { code?: unknown }).code;
  return typeof code === "string" ? code : error.message;
}
