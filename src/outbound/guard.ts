/**
 * Outbound HTTP guard: the SSRF defence for requests whose URL an operator or a user
 * influences. Server method files reach it as `globalThis.APP_SERVER.validateUpstreamUrl`
 * and `.safeFetch`; docs/guides/outbound-guard.md explains when to use it.
 *
 * This part imports only node built-ins, undici and ipaddr.js, and nothing else of src/.
 */
import { lookup as dnsLookup } from "node:dns/promises";
import type { Response } from "undici";
import { AllowList } from "./allow-list.js";
import { PinnedAgents } from "./pinned-agents.js";
import { deadline, fetchPinned, untilAborted, type SafeFetchInit } from "./safe-fetch.js";
import { loadUndici } from "./undici-client.js";
import { validateTarget, type ResolvedAddress, type Resolver } from "./validate-url.js";

export interface OutboundGuardOptions {
  /** `server.outbound.allow`: `host` or `host:port` entries exempt from the address block. */
  allow?: readonly string[];
  /** Deadline of a whole `safeFetch` call in ms (DNS, connect, headers, body). Default 30 000. */
  timeoutMs?: number;
  /** Every A and AAAA address of a name; tests inject a stub. Default `dns.promises.lookup`. */
  resolve?: (hostname: string) => Promise<Array<{ address: string; family: 4 | 6 }>>;
}

export interface OutboundGuard {
  /**
   * Parses `url` and checks scheme, host name and every address the host resolves to.
   * Async because it resolves DNS. Resolves with a fresh parsed `URL`; rejects only with
   * `SsrfBlockedError` (`details.reason` says why, e.g. `invalid-url`, `dns-failure`).
   */
  validateUpstreamUrl(url: string | URL): Promise<URL>;
  /**
   * `validateUpstreamUrl`, then a fetch that connects only to the validated addresses,
   * never follows redirects (any 3xx rejects with `SsrfRedirectError`) and gives up after
   * the timeout (a DOMException named `TimeoutError`) or when `init.signal` aborts.
   */
  safeFetch(url: string | URL, init?: SafeFetchInit): Promise<Response>;
  /** The deadline of a call that sets no `timeoutMs` of its own. */
  readonly timeoutMs: number;
  /** Closes the pooled connections; in-flight requests finish first. */
  close(): Promise<void>;
}

const DEFAULT_TIMEOUT_MS = 30_000;

async function systemResolve(hostname: string): Promise<ResolvedAddress[]> {
  // `all`: a host is blocked if any one of its addresses is; `verbatim`: keep the
  // resolver's order, which is also the order the pinned connection tries them in.
  const answers = await dnsLookup(hostname, { all: true, verbatim: true });
  return answers.map(({ address, family }) => ({ address, family: family === 6 ? 6 : 4 }));
}

class Guard {
  readonly #allow: AllowList;
  readonly timeoutMs: number;
  readonly #resolve: Resolver;
  readonly #agents = new PinnedAgents();

  constructor(options: OutboundGuardOptions) {
    this.#allow = new AllowList(options.allow ?? []);
    this.timeoutMs = checkTimeout(options.timeoutMs ?? DEFAULT_TIMEOUT_MS, "timeoutMs");
    this.#resolve = options.resolve ?? systemResolve;
  }

  async validateUpstreamUrl(url: string | URL): Promise<URL> {
    const target = await validateTarget(url, this.#resolve, this.#allow);
    return target.url;
  }

  async safeFetch(url: string | URL, init: SafeFetchInit = {}): Promise<Response> {
    const timeoutMs = init.timeoutMs === undefined ? this.timeoutMs : checkTimeout(init.timeoutMs, "init.timeoutMs");
    const signal = deadline(init.signal, timeoutMs);
    signal.throwIfAborted(); // a caller that already gave up costs no DNS lookup
    // The first call loads undici while DNS answers, instead of after it.
    const loading = loadUndici();
    loading.catch(() => {}); // a failed load is reported by the await below, not as unhandled
    const target = await untilAborted(validateTarget(url, this.#resolve, this.#allow), signal);
    const undici = await untilAborted(loading, signal);
    return fetchPinned(undici, target, init, signal, this.#agents);
  }

  close(): Promise<void> {
    return this.#agents.close();
  }
}

function checkTimeout(value: number, name: string): number {
  if (!Number.isFinite(value) || value <= 0) {
    throw new TypeError(`${name} must be a positive number of milliseconds, got ${String(value)}`);
  }
  return value;
}

/** A guard of its own (tests, or a part that needs its own allow list). */
export function createOutboundGuard(options: OutboundGuardOptions = {}): OutboundGuard {
  const guard = new Guard(options);
  // Plain functions, so that `const { safeFetch } = guard` keeps working.
  return Object.freeze({
    validateUpstreamUrl: (url: string | URL) => guard.validateUpstreamUrl(url),
    safeFetch: (url: string | URL, init?: SafeFetchInit) => guard.safeFetch(url, init),
    timeoutMs: guard.timeoutMs,
    close: () => guard.close(),
  });
}

let defaultGuard = createOutboundGuard();

/**
 * Replaces the process-wide guard behind `validateUpstreamUrl` / `safeFetch` (the server
 * calls this with `server.outbound` at startup). The previous guard's connections close
 * once their requests finish.
 */
export function configureDefaultGuard(options: OutboundGuardOptions): void {
  const previous = defaultGuard;
  defaultGuard = createOutboundGuard(options);
  previous.close().catch(() => {});
}

/** The process-wide guard as it is now, for what is built on it (safe-request.ts). */
export const defaultOutboundGuard = (): OutboundGuard => defaultGuard;

/** The process-wide guard's `validateUpstreamUrl`; async, as it resolves DNS. */
export const validateUpstreamUrl = (url: string | URL): Promise<URL> => defaultGuard.validateUpstreamUrl(url);

/** The process-wide guard's `safeFetch`. */
export const safeFetch = (url: string | URL, init?: SafeFetchInit): Promise<Response> =>
  defaultGuard.safeFetch(url, init);
