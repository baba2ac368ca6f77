/**
 * From the raw request URL to the upstream request path (docs/guides/proxy.md "The path"). The
 * path is checked on the raw URL, segment by segment, decoded until it stops changing: a
 * traversal hidden under any number of encodings (`%2e%2e`, `%252e%252e`), an encoded
 * separator (`%2f`, `%5c`) or a Tomcat-style `..;` never reaches an upstream. What goes
 * upstream keeps the client's own encoding.
 */

export const PROXY_PREFIX = "/proxy/";

export interface ProxyRequestTarget {
  /** The alias as decoded from the first segment, or null when it cannot be decoded. */
  alias: string | null;
  /** The path below the alias as sent (still encoded), without its leading `/`. */
  rawPath: string;
  /** `?…` as sent, or "". */
  query: string;
}

/** Splits `/proxy/<alias>/<path>?<query>`; `url` is the raw request-target. */
export function splitProxyUrl(url: string): ProxyRequestTarget {
  const queryAt = url.indexOf("?");
  const pathPart = queryAt === -1 ? url : url.slice(0, queryAt);
  const query = queryAt === -1 ? "" : url.slice(queryAt);
  const rest = pathPart.startsWith(PROXY_PREFIX) ? pathPart.slice(PROXY_PREFIX.length) : "";
  const slash = rest.indexOf("/");
  const rawAlias = slash === -1 ? rest : rest.slice(0, slash);
  const rawPath = slash === -1 ? "" : rest.slice(slash + 1);
  let alias: string | null = null;
  try {
    alias = decodeURIComponent(rawAlias);
  } catch {
    alias = null;
  }
  return { alias, rawPath, query };
}

const MAX_DECODE_ROUNDS = 8;
const PERCENT_BYTE = /%([0-9A-Fa-f]{2})/g;
// Separators, NUL, and 0xC0/0xC1: lead bytes of overlong UTF-8 (`%c0%ae` = "."), which
// old decoders turn into dots and slashes.
const FORBIDDEN = /[/\\\0\xc0\xc1]/;
// Printable ASCII only: anything else is not a valid request-target character.
const RAW_PATH = /^[\x21-\x7e]*$/;

/** True when no segment of the raw path could step out of the upstream's base path. */
export function isSafeProxyPath(rawPath: string): boolean {
  if (!RAW_PATH.test(rawPath)) return false;
  for (const segment of rawPath.split("/")) {
    if (segment === "") continue;
    const decoded = decodeSegment(segment);
    if (decoded === null || FORBIDDEN.test(decoded)) return false;
    // `..;jsessionid=x` is `..` to servlet containers; trailing blanks are dropped by some.
    const semicolon = decoded.indexOf(";");
    const bare = (semicolon === -1 ? decoded : decoded.slice(0, semicolon)).trimEnd();
    if (bare === "." || bare === "..") return false;
  }
  return true;
}

/**
 * Byte-wise percent-decoding, repeated until nothing changes. Lenient on purpose: an
 * invalid sequence elsewhere in the segment must not stop the valid ones being seen.
 * Null when it still changes after `MAX_DECODE_ROUNDS` (nobody legitimately encodes eight times).
 */
function decodeSegment(segment: string): string | null {
  let current = segment;
  for (let round = 0; round < MAX_DECODE_ROUNDS; round += 1) {
    if (!current.includes("%")) return current;
    const next = current.replace(PERCENT_BYTE, (_match, hex: string) => String.fromCharCode(parseInt(hex, 16)));
    if (next === current) return current;
    current = next;
  }
  return null;
}

export interface UpstreamBase {
  origin: string;
  /** The base URL's path without trailing slashes ("" for the root). */
  basePath: string;
}

export function parseBaseUrl(baseUrl: string): UpstreamBase {
  const url = new URL(baseUrl);
  return { origin: url.origin, basePath: url.pathname.replace(/\/+$/, "") };
}

/**
 * The request path sent to the upstream, or null when the final URL would leave the
 * upstream's origin or base path (the last line of defence after `isSafeProxyPath`).
 */
export function upstreamPath(base: UpstreamBase, rawPath: string, query: string): string | null {
  const path = `${base.basePath}/${rawPath}${query}`;
  let url: URL;
  try {
    url = new URL(base.origin + path);
  } catch {
    return null;
  }
  if (url.origin !== base.origin) return null;
  if (!(url.pathname + "/").startsWith(base.basePath + "/")) return null;
  return path;
}
