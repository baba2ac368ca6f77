import { isIP } from "node:net";
import { effectivePort, type AllowList } from "./allow-list.js";
import { blockedReason } from "./classify-address.js";
import { SsrfBlockedError } from "./errors.js";

export interface ResolvedAddress {
  readonly address: string;
  readonly family: 4 | 6;
}

/** Every A and AAAA address of a host name. */
export type Resolver = (hostname: string) => Promise<ResolvedAddress[]>;

/** A URL that passed the guard, and the addresses a connection to it may use. */
export interface ValidatedTarget {
  readonly url: URL;
  /** Non-empty; IP literals without brackets. */
  readonly addresses: readonly ResolvedAddress[];
}

const SCHEMES = new Set(["http:", "https:"]);

/**
 * Parses `input` and checks the scheme, the host name and every address it resolves to.
 * Throws only `SsrfBlockedError`. The URL returned is a fresh copy, so a caller mutating
 * the `URL` it passed in cannot change what was validated.
 */
export async function validateTarget(
  input: string | URL,
  resolve: Resolver,
  allow: AllowList,
): Promise<ValidatedTarget> {
  const url = parse(input);
  if (!SCHEMES.has(url.protocol)) throw blocked(url, "scheme");

  // The WHATWG parser has already turned every IPv4 spelling (2130706433, 0x7f000001,
  // 0177.0.0.1, 127.1, 0) into dotted decimal, so an IPv4 literal is recognisable here.
  const hostname = url.hostname;
  const bare = hostname.startsWith("[") ? hostname.slice(1, -1) : hostname;
  if (bare === "") throw blocked(url, "invalid-url");
  const exempt = allow.has(hostname, effectivePort(url));

  // localhost and *.localhost must resolve to loopback (RFC 6761), whatever the
  // resolver says; refuse them before asking it.
  if (!exempt && isLocalhostName(bare)) throw blocked(url, "localhost");

  const candidates = isIP(bare) === 0 ? await lookup(url, bare, resolve) : [bare];

  const addresses: ResolvedAddress[] = [];
  for (const address of candidates) {
    // Exempt hosts skip the classification, but what we pin must still be an address.
    const family = isIP(address);
    const reason = family === 0 ? "invalid-address" : exempt ? null : blockedReason(address);
    if (reason !== null) throw blocked(url, reason, address);
    addresses.push({ address, family: family === 6 ? 6 : 4 });
  }
  return { url, addresses };
}

function parse(input: string | URL): URL {
  try {
    return new URL(input instanceof URL ? input.href : String(input));
  } catch (cause) {
    // The input is not echoed back: it may carry credentials, and it is the caller's anyway.
    throw new SsrfBlockedError("Outbound request blocked: invalid URL", { reason: "invalid-url" }, { cause });
  }
}

async function lookup(url: URL, hostname: string, resolve: Resolver): Promise<string[]> {
  let answers: ResolvedAddress[];
  try {
    answers = await resolve(hostname);
  } catch (cause) {
    throw blocked(url, "dns-failure", undefined, cause);
  }
  if (!Array.isArray(answers) || answers.length === 0) throw blocked(url, "unresolvable");
  // The family is recomputed from the address itself: it is what the socket will use.
  return answers.map((answer) => String(answer?.address));
}

function isLocalhostName(hostname: string): boolean {
  const name = hostname.endsWith(".") ? hostname.slice(0, -1) : hostname;
  return name === "localhost" || name.endsWith(".localhost");
}

/** Blocks that `server.outbound.allow` does not lift. */
const NOT_ALLOWABLE = new Set(["scheme", "invalid-url", "dns-failure", "unresolvable", "invalid-address"]);
const ALLOW_DOC = "docs/guides/outbound-guard.md#serveroutbound-settings";

function blocked(url: URL, reason: string, address?: string, cause?: unknown): SsrfBlockedError {
  const shown = new URL(url.href);
  shown.username = "";
  shown.password = "";
  const where = address === undefined ? shown.host : `${shown.host} (${address})`;
  // A block by address class is the one an operator may lift: say where, since the error
  // usually first shows up as a method's 500 in the log, far from the guard's docs.
  const hint = NOT_ALLOWABLE.has(reason) ? "" : `; to let methods reach it, list "${shown.hostname}:${effectivePort(shown)}" in server.outbound.allow (${ALLOW_DOC})`;
  return new SsrfBlockedError(
    `Outbound request to ${where} blocked: ${reason}${hint}`,
    address === undefined ? { reason, url: shown.href } : { reason, address, url: shown.href },
    cause === undefined ? undefined : { cause },
  );
}
