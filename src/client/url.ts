/**
 * Final URL of a request (docs/guides/browser.md "URLs"): `baseURL` + `/` +
 * path without doubled slashes at the join, absolute http(s) paths as they are, and in
 * proxy mode `/proxy/<alias>/<baseURL>/<path>`; then the `query` option.
 */
import type { QueryParams, QueryScalar } from "./types.js";

const ABSOLUTE_HTTP = /^https?:\/\//i;

export function isAbsoluteHttpUrl(path: string): boolean {
  return ABSOLUTE_HTTP.test(path);
}

export function joinPath(base: string, path: string): string {
  if (base === "") return path;
  if (path === "") return base;
  return `${base.replace(/\/+$/, "")}/${path.replace(/^\/+/, "")}`;
}

export function buildUrl(
  path: string,
  baseURL: string | undefined,
  proxy: string | undefined,
  query: QueryParams | undefined,
): string {
  if (typeof path !== "string") throw new TypeError("HttpClient: the request path must be a string");
  let url: string;
  if (proxy !== undefined) {
    // Proxy mode promises that every request goes through the alias; sending an absolute
    // URL elsewhere would carry the proxy's auth headers to a host nobody configured.
    if (isAbsoluteHttpUrl(path)) {
      throw new TypeError(`HttpClient: proxy mode ("${proxy}") takes paths below the upstream, not the absolute URL ${path}`);
    }
    const prefix = `/proxy/${encodeURIComponent(proxy)}`;
    const base = (baseURL ?? "").replace(/^\/+|\/+$/g, "");
    url = joinPath(base === "" ? prefix : `${prefix}/${base}`, path.replace(/^\/+/, ""));
    if (url === prefix) url += "/";
  } else if (isAbsoluteHttpUrl(path) || baseURL === undefined || baseURL === "") {
    url = path;
  } else {
    url = joinPath(baseURL, path);
  }
  return appendQuery(url, query);
}

export function appendQuery(url: string, query: QueryParams | undefined): string {
  if (query === undefined || query === null) return url;
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(query)) {
    const values: readonly QueryScalar[] = Array.isArray(value) ? value : [value as QueryScalar];
    for (const item of values) {
      if (item === null || item === undefined) continue;
      params.append(key, item instanceof Date ? item.toISOString() : String(item));
    }
  }
  const search = params.toString();
  if (search === "") return url;
  const hashAt = url.indexOf("#");
  const beforeHash = hashAt === -1 ? url : url.slice(0, hashAt);
  const hash = hashAt === -1 ? "" : url.slice(hashAt);
  const joiner = !beforeHash.includes("?") ? "?" : beforeHash.endsWith("?") || beforeHash.endsWith("&") ? "" : "&";
  return `${beforeHash}${joiner}${search}${hash}`;
}

/**
 * Whether the request stays on the page's origin, the only place the CSRF token may go.
 * Outside a page (no `location`) only relative URLs count as same-origin.
 */
export function isSameOrigin(url: string): boolean {
  const location = (globalThis as { location?: Location }).location;
  if (location === undefined || typeof location.href !== "string") {
    return !/^[a-z][a-z0-9+.-]*:/i.test(url) && !url.startsWith("//");
  }
  try {
    return new URL(url, location.href).origin === location.origin;
  } catch {
    return false;
  }
}

/** The CSRF token the viewer page injected, read fresh at every call. */
export function readCsrfToken(): string | undefined {
  const token = (globalThis as { APP_CSRF_TOKEN?: unknown }).APP_CSRF_TOKEN;
  return typeof token === "string" && token !== "" ? token : undefined;
}
