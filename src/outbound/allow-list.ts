import { isIPv6 } from "node:net";

/*
 * `server.outbound.allow`: `host` or `host:port` entries exempt from the address block,
 * so an operator can name an internal upstream (and tests can reach loopback servers).
 * Hosts are canonicalised by the same WHATWG parser that parses request URLs, so
 * `LOCALHOST`, `0x7f000001` or `[0:0::1]` match however the request URL spells them.
 */

/** Any port of the host is exempt. */
const ANY_PORT = "any";

const ENTRY = /^(\[[^\]\s]+\]|[^:[\]/?#@\\\s]+)(?::(\d{1,5}))?$/;

export class AllowList {
  // Keyed by canonical `URL.hostname` (IPv6 with brackets); a Map so that no host
  // name, however odd, resolves to something inherited.
  readonly #hosts = new Map<string, Set<number> | typeof ANY_PORT>();

  /** Throws a TypeError naming the first malformed entry: a typo must stop startup. */
  constructor(entries: readonly string[] = []) {
    for (const raw of entries) this.#add(raw);
  }

  /** Whether `hostname` (as `URL.hostname` gives it) on `port` is exempt. */
  has(hostname: string, port: number): boolean {
    const ports = this.#hosts.get(hostname);
    if (ports === undefined) return false;
    return ports === ANY_PORT || ports.has(port);
  }

  #add(raw: string): void {
    const entry = raw.trim();
    // A bare IPv6 literal has colons of its own; it can only mean "any port".
    const match = ENTRY.exec(isIPv6(entry) ? `[${entry}]` : entry);
    const host = match?.[1] === undefined ? null : canonicalHost(match[1]);
    const port = match?.[2] === undefined ? null : Number(match[2]);
    if (host === null || (port !== null && (port < 1 || port > 65535))) {
      throw new TypeError(`server.outbound.allow: "${raw}" is not a host or host:port`);
    }
    const current = this.#hosts.get(host);
    if (port === null || current === ANY_PORT) {
      this.#hosts.set(host, ANY_PORT);
    } else if (current === undefined) {
      this.#hosts.set(host, new Set([port]));
    } else {
      current.add(port);
    }
  }
}

function canonicalHost(host: string): string | null {
  try {
    const hostname = new URL(`http://${host}/`).hostname;
    return hostname === "" ? null : hostname;
  } catch {
    return null;
  }
}

/** The port a URL connects to: its explicit port, else its scheme's default. */
export function effectivePort(url: URL): number {
  if (url.port !== "") return Number(url.port);
  return url.protocol === "https:" ? 443 : 80;
}
