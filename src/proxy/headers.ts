/**
 * Which headers cross the proxy (docs/guides/proxy.md "Headers"). Hop-by-hop headers describe one
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
 * How many client headers, and how many bytes of them (names and values), the proxy
 * forwards (docs/guides/proxy.md "Headers"); a request with more is refused (431). A browser
 * sends some 15 to 25. Upstreams bound what they take: Apache 100 fields, Node 16 KiB
 * (and Node 20 may drop what is past its `maxHeadersCount` without a word): a client's
 * flood must not crowd out the headers the server adds, its API key above all.
 */
export const MAX_FORWARDED_HEADERS = 64;
export const MAX_FORWARDED_HEADER_BYTES = 8 * 1024;

/**
 * The client's headers minus the dropped ones, plus `X-Forwarded-*`; null when the client
 * sent more than the proxy forwards. The result has no prototype: a header named
 * `__proto__` is a plain entry, not a prototype change.
 */
export function upstreamRequestHeaders(req: IncomingMessage, options: ForwardedInfo): Record<string, string> | null {
  const incoming = req.headers;
  const named = connectionTokens(incoming.connection);
  const out: Record<string, string> = Object.create(null);
  let count = 0;
  let bytes = 0;
  for (const name in incoming) {
    if (isHopByHop(name) || REQUEST_DROPPED.has(name) || named?.has(name)) continue;
    const value = incoming[name];
    if (value === undefined) continue;
    const joined = Array.isArray(value) ? value.join(", ") : value;
    count += 1;
    bytes += name.length + joined.length;
    if (count > MAX_FORWARDED_HEADERS || bytes > MAX_FORWARDED_HEADER_BYTES) return null;
    out[name] = joined;
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

/** The headers the proxy sets itself, besides the static ones and the verifiers' changes. */
const PROXY_SET = new Set(["x-forwarded-for", "x-forwarded-proto", "x-forwarded-host", "x-request-id", "traceparent", "tracestate"]);

/**
 * The names a verifier added or changed, against the headers as they were before the
 * verifiers ran: they go upstream with the server's own, ahead of the client's.
 */
export function changedNames(before: Readonly<Record<string, string>>, after: Readonly<Record<string, string>>): Set<string> {
  const changed = new Set<string>();
  for (const name in after) if (before[name] !== after[name]) changed.add(name);
  return changed;
}

/**
 * The headers as undici sends them, in order: the server's own first (static headers,
 * the verifiers' changes, `X-Forwarded-*`, the request id and trace), then the client's.
 * An upstream that keeps only its first N headers then loses the client's, never the API
 * key. A flat list, not an object: an object lists integer-like names (`1000: x`) first
 * whatever the order they were added in.
 */
export function serverHeldFirst(headers: Readonly<Record<string, string>>, staticNames: ReadonlySet<string>, verifierNames: ReadonlySet<string> | null): string[] {
  const list: string[] = [];
  const client: string[] = [];
  for (const name in headers) {
    const value = headers[name]!;
    if (PROXY_SET.has(name) || staticNames.has(name) || verifierNames?.has(name)) list.push(name, value);
    else client.push(name, value);
  }
  for (const item of client) list.push(item);
  return list;
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
 * `X-Request-Id` (added as the head is written, src/http/answer-headers.ts), not one the upstream chose. Its
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
