/**
 * CORS for the origins in `server.allowedOrigins` (docs/guides/browser.md "Cross-origin viewers"): the
 * RPC gateway and the proxy answer their preflights and let their pages read the answers,
 * with credentials. Other origins get no CORS header at all, so the browser keeps their
 * pages from reading anything; the origin check (src/auth/origin.ts) refuses their
 * session-bound calls besides.
 *
 * Written here rather than with @fastify/cors, which sets its headers on Fastify's reply
 * object: the proxy and streaming answers write the raw response themselves and would go
 * out without them. It also answers every OPTIONS request that carries an Origin as a
 * preflight (or 400 "Invalid Preflight Request"), so a real OPTIONS call from a listed
 * origin could never be forwarded by the proxy, and it adds an `OPTIONS *` route for every
 * path. Working around the three took more code than this file.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";

export interface CorsOptions {
  allowedOrigins: ReadonlySet<string>;
  /** The verbs the routes behind take, for the preflight's `Access-Control-Allow-Methods`. */
  methods: readonly string[];
}

/** Browsers cache a preflight at most this long (Chromium caps it at 2 hours). */
export const PREFLIGHT_MAX_AGE_SEC = 600;

/** Answer headers the browser client reads besides the safelisted ones. */
export const EXPOSED_HEADERS = ["Retry-After", "X-Request-Id"];

/** A header list as the Fetch standard's `Access-Control-Request-Headers` has it: lowercase names and commas. */
const HEADER_LIST = /^[a-z0-9!#$%&'*+.^_`|~-]+(?:\s*,\s*[a-z0-9!#$%&'*+.^_`|~-]+)*$/i;

/**
 * Adds CORS to the routes registered on `scope` after this call. With no listed origin it
 * adds nothing: no answer then depends on the Origin header.
 */
export function answerCors(scope: FastifyInstance, options: CorsOptions): void {
  if (options.allowedOrigins.size === 0) return;
  const allowMethods = options.methods.join(", ");
  const exposeHeaders = EXPOSED_HEADERS.join(", ");

  scope.addHook("onRequest", function cors(request: FastifyRequest, reply: FastifyReply, done: () => void) {
    const res = reply.raw;
    const origin = request.headers.origin;
    // Whether the answer carries CORS headers depends on the Origin header, so caches must
    // key on it, for the listed and the unlisted alike.
    res.setHeader("vary", "Origin");
    if (origin === undefined || !options.allowedOrigins.has(origin)) return done();
    res.setHeader("access-control-allow-origin", origin);
    res.setHeader("access-control-allow-credentials", "true");
    const requestedMethod = request.headers["access-control-request-method"];
    // Only an OPTIONS request that names the method it asks for is a preflight; any other
    // OPTIONS request is a call like the rest (the proxy forwards it).
    if (request.method !== "OPTIONS" || requestedMethod === undefined) {
      res.setHeader("access-control-expose-headers", exposeHeaders);
      return done();
    }
    res.setHeader("vary", "Origin, Access-Control-Request-Method, Access-Control-Request-Headers");
    res.setHeader("access-control-allow-methods", allowMethods);
    // The listed origin is trusted with any request header: verifiers and upstreams read
    // headers of their own (an API key, a partner token) that no fixed list could name.
    const requestedHeaders = request.headers["access-control-request-headers"];
    if (requestedHeaders !== undefined && HEADER_LIST.test(requestedHeaders)) res.setHeader("access-control-allow-headers", requestedHeaders);
    res.setHeader("access-control-max-age", String(PREFLIGHT_MAX_AGE_SEC));
    reply.code(204).send();
  });
}
