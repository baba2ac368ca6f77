/**
 * Which headers cross the proxy (docs/proxy.md "Headers"). Hop-by-hop headers describe one
 * connection and must not be replayed on another (RFC 9110 section 7.6.1); the session
 * cookie and CSRF token belong to this server and must never reach an upstream; an
 * upstream's `Set-Cookie` would land on this server's origin and is dropped, and so are
 * its CORS headers.
 */
import type { IncomingHttpHeaders, IncomingMessage } from "node:http";
import { requestProtocol } from "../auth/origin.js";
import type { TraceContext } from "../tracing/trace-context.js";

const HOP_BY_HOP = new Set(["connection", "keep-alive", "te", "trailer", "transfer-encoding", "upgrade"]);

/**
 * Never sent upstream besides the hop-by-hop ones. `expect` is answered by this server
 * (Node sends `100 Continue` itself) and undici refuses to send it. The others let a
 * client speak for the proxy: `Forwarded` and `X-Real-IP` claim another client address
 * or scheme (the proxy sets `X-Forwarded-*` itself), and `X-Original-URL`,
 * `X-Rewrite-URL` and `X-Forwarded-Prefix` make some upstreams (IIS URL Rewrite, several
 * frameworks) serve another path than the one the alias allows.
 */
const REQUEST_DROPPED = new Set([
  "host",
  "cookie",
  "x-app-csrf",
  "expect",
  "forwarded",
  "x-real-ip",
  "x-original-url",
  "x-rewrite-url",
  "x-forwarded-prefix",
]);

/** Static headers that would break or smuggle the upstream request: refused at start. */
export const STATIC_HEADERS_REFUSED = new Set([...HOP_BY_HOP, "host", "content-length", "expect"]);

function isHopByHop(name: string): boolean {
  return HOP_BY_HOP.has(name) || name.startsWith("proxy-");
}

/** Header names listed in `Connection` (lowercased); they are hop-by-hop too. */
function connectionTokens(value: string | string[] | undefined): Set<string> | null {
  // What nearly every peer sends names only a header that is dropped anyway: no set to build.
  if (value === undefined || value === "keep-alive") return null;
  const tokens = new Set<string>();
  for (const part of (Array.isArray(value) ? value.join(",") : value).split(",")) {
    const token = part.trim().toLowerCase();
    if (token !== "") tokens.add(token);
  }
  return tokens;
}

export interface ForwardedInfo {
  trustProxy: boolean;
}

/**
 * The client's headers minus the dropped ones, plus `X-Forwarded-*`. The result has no
 * prototype: a header named `__proto__` is a plain entry, not a prototype change.
 */
export function upstreamRequestHeaders(req: IncomingMessage, options: ForwardedInfo): Record<string, string> {
  const incoming = req.headers;
  const named = connectionTokens(incoming.connection);
  const out: Record<string, string> = Object.create(null);
  for (const name in incoming) {
    if (isHopByHop(name) || REQUEST_DROPPED.has(name) || named?.has(name)) continue;
    const value = incoming[name];
    if (value === undefined) continue;
    out[name] = Array.isArray(value) ? value.join(", ") : value;
  }
  const clientIp = req.socket.remoteAddress ?? "";
  const priorFor = options.trustProxy ? firstHeader(incoming["x-forwarded-for"]) : undefined;
  out["x-forwarded-for"] = priorFor ? `${priorFor}, ${clientIp}` : clientIp;
  out["x-forwarded-proto"] = requestProtocol(incoming, Boolean((req.socket as { encrypted?: boolean }).encrypted), options.trustProxy);
  const forwardedHost = options.trustProxy ? firstToken(incoming["x-forwarded-host"]) : undefined;
  const host = forwardedHost ?? incoming.host;
  if (host) out["x-forwarded-host"] = host;
  else delete out["x-forwarded-host"];
  return out;
}

/**
 * This request's id and a `traceparent` whose parent is the proxy's own span go upstream in
 * place of what the client sent: a malformed id or header the client sent never does, and
 * the upstream's spans join the trace under this hop. Static headers and verifiers come after.
 */
export function applyTraceHeaders(headers: Record<string, string>, requestId: string, trace: TraceContext): void {
  headers["x-request-id"] = requestId;
  headers.traceparent = trace.traceparent;
  if (trace.tracestate === undefined) delete headers.tracestate;
  else headers.tracestate = trace.tracestate;
}

/** Static headers win over any header of the same name, whatever its case. */
export function applyStaticHeaders(headers: Record<string, string>, staticHeaders: ReadonlyArray<readonly [string, string]>): void {
  if (staticHeaders.length === 0) return;
  const names = new Set(staticHeaders.map(([name]) => name));
  for (const key of Object.keys(headers)) if (names.has(key.toLowerCase())) delete headers[key];
  for (const [name, value] of staticHeaders) headers[name] = value;
}

/**
 * The upstream's answer headers as sent to the client. The answer carries this server's
 * `X-Request-Id` (set on the response before forwarding), not one the upstream chose. Its
 * `Access-Control-*` headers are
 * dropped: who may read the proxy's answers cross-origin is this server's decision
 * (`server.allowedOrigins`, src/http/cors.ts), and an upstream's `*` would replace it.
 * `ownVary` is what this server's answer already varies on (Origin), kept beside the
 * upstream's `Vary`, which would otherwise replace it.
 */
export function clientResponseHeaders(
  headers: IncomingHttpHeaders | Record<string, string | string[] | undefined>,
  ownVary?: number | string | string[],
): Record<string, string | string[]> {
  const named = connectionTokens(headers.connection);
  const out: Record<string, string | string[]> = Object.create(null);
  for (const name in headers) {
    if (isHopByHop(name) || name === "set-cookie" || name === "x-request-id" || name.startsWith("access-control-") || named?.has(name)) continue;
    const value = headers[name];
    if (value !== undefined) out[name] = value;
  }
  if (ownVary !== undefined && out.vary !== undefined) out.vary = `${String(ownVary)}, ${[out.vary].flat().join(", ")}`;
  return out;
}

function firstHeader(value: string | string[] | undefined): string | undefined {
  const joined = Array.isArray(value) ? value.join(", ") : value;
  return joined?.trim() || undefined;
}

function firstToken(value: string | string[] | undefined): string | undefined {
  const first = Array.isArray(value) ? value[0] : value;
  return first?.split(",")[0]?.trim() || undefined;
}
