// Other projects' SSRF test vectors (test/fixtures/vectors/ssrf-vectors.json, sources in
// its README) run against the outbound guard: every URL through validateUpstreamUrl, the
// safeFetch cases against real loopback servers. Host names are answered by a DNS stub
// fed from the file, so no case touches real DNS. "either" cases (the guard may block or
// allow them, docs/guides/outbound-guard.md) run and report their outcome without failing.
import { once } from "node:events";
import { readFileSync } from "node:fs";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { isIP, type AddressInfo } from "node:net";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SsrfBlockedError, SsrfRedirectError } from "../../src/outbound/errors.js";
import { createOutboundGuard, type OutboundGuard } from "../../src/outbound/guard.js";

type DnsAnswer = string[] | { sequence: string[][] };

interface UrlVector {
  id: string;
  kind: "validate";
  input: string;
  expect: "blocked" | "allowed" | "either";
  source: string;
  case: string;
  note?: string;
  dns?: DnsAnswer;
}

interface FetchVector {
  id: string;
  input: string;
  expect:
    | { ok: true; status: number; body: string; lookups?: number }
    | { ok: false; code: "SSRF_BLOCKED" | "SSRF_REDIRECT"; location?: string; noConnection?: boolean };
  case: string;
  note?: string;
}

interface VectorFile {
  dnsStub: Record<string, DnsAnswer>;
  vectors: UrlVector[];
  safeFetch: FetchVector[];
}

const FILE = JSON.parse(readFileSync(join(import.meta.dirname, "../fixtures/vectors/ssrf-vectors.json"), "utf8")) as VectorFile;

type Outcome = { blocked: false } | { blocked: true; reason: unknown; address: unknown };

/**
 * The DNS stub: answers from the file's table (a `sequence` answers its entries in turn,
 * then keeps answering the last). A name the table lacks fails like NXDOMAIN and is
 * recorded, so that a vector can never pass as "blocked" only because the stub had no
 * answer for it.
 */
function stubResolver(table: Record<string, DnsAnswer>) {
  const lookups: string[] = [];
  const unknown: string[] = [];
  const resolve = async (hostname: string) => {
    lookups.push(hostname);
    const entry = Object.hasOwn(table, hostname) ? table[hostname] : undefined;
    if (entry === undefined) {
      unknown.push(hostname);
      throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: "ENOTFOUND" });
    }
    const answers = Array.isArray(entry)
      ? entry
      : entry.sequence[Math.min(lookups.filter((name) => name === hostname).length, entry.sequence.length) - 1]!;
    return answers.map((address) => ({ address, family: (address.includes(":") ? 6 : 4) as 4 | 6 }));
  };
  return { resolve, lookups, unknown };
}

const cleanups: Array<() => Promise<void>> = [];
afterAll(async () => {
  while (cleanups.length > 0) await cleanups.pop()?.();
});

interface Harness {
  port: number;
  server: Server;
  connections: number;
}

async function listen(handler: (req: IncomingMessage, res: ServerResponse) => void, host = "127.0.0.1", port = 0): Promise<Harness> {
  const server = createServer(handler);
  const harness: Harness = { port: 0, server, connections: 0 };
  server.on("connection", () => (harness.connections += 1));
  server.listen(port, host);
  await once(server, "listening");
  harness.port = (server.address() as AddressInfo).port;
  cleanups.push(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });
  return harness;
}

/** {P1}: the exempt upstream. `/ok` answers "ok"; `/redirect?status=&to=` answers that redirect. */
function upstream(req: IncomingMessage, res: ServerResponse): void {
  const url = new URL(req.url ?? "/", "http://upstream");
  if (url.pathname === "/redirect") {
    res.writeHead(Number(url.searchParams.get("status")), { location: url.searchParams.get("to") ?? "" }).end("moved");
    return;
  }
  res.end(url.pathname === "/ok" ? "ok" : "not found");
}

let p1: Harness;
beforeAll(async () => {
  p1 = await listen(upstream);
});

function guardFor(allow: string[], table: Record<string, DnsAnswer>) {
  const stub = stubResolver(table);
  const guard = createOutboundGuard({ allow, resolve: stub.resolve, timeoutMs: 5_000 });
  cleanups.push(() => guard.close());
  return { guard, stub };
}

async function outcomeOf(guard: OutboundGuard, input: string): Promise<Outcome> {
  try {
    await guard.validateUpstreamUrl(input);
    return { blocked: false };
  } catch (error) {
    // validateUpstreamUrl rejects only with SsrfBlockedError: anything else is a bug, not a block.
    expect(error).toBeInstanceOf(SsrfBlockedError);
    expect((error as SsrfBlockedError).code).toBe("SSRF_BLOCKED");
    const { details } = error as SsrfBlockedError;
    return { blocked: true, reason: details.reason, address: details.address };
  }
}

/** Reasons that are not about the address a name or literal stands for. */
const NOT_ADDRESS_REASONS = new Set(["invalid-url", "scheme", "localhost", "dns-failure", "unresolvable", "invalid-address"]);

/**
 * Why a "blocked" vector must be blocked, worked out from its own data, so that a vector
 * never passes for the wrong reason (a URL the guard failed to parse passing as an
 * address check, say):
 * - a URL the WHATWG parser rejects: `invalid-url`. The file's notes say so for each such
 *   vector ("the WHATWG URL parser rejects it"); the parser decides here, not the note;
 * - a scheme other than http and https: `scheme`;
 * - `localhost` and `*.localhost`: `localhost`, before any lookup;
 * - an IP literal: an address class, for that very address;
 * - a host name: an address class, for one of the addresses the DNS stub answers for it.
 */
function expectedBlock(vector: UrlVector): Outcome {
  const input = vector.input.replaceAll("{P1}", String(p1.port));
  if (!URL.canParse(input)) return { blocked: true, reason: "invalid-url", address: undefined };
  const url = new URL(input);
  if (url.protocol !== "http:" && url.protocol !== "https:") return { blocked: true, reason: "scheme", address: undefined };
  const bare = url.hostname.startsWith("[") ? url.hostname.slice(1, -1) : url.hostname;
  const name = bare.endsWith(".") ? bare.slice(0, -1) : bare;
  if (name === "localhost" || name.endsWith(".localhost")) return { blocked: true, reason: "localhost", address: undefined };
  const addressClass = expect.toSatisfy((reason: unknown) => typeof reason === "string" && reason !== "" && !NOT_ADDRESS_REASONS.has(reason), "an address class");
  if (isIP(bare) !== 0) return { blocked: true, reason: addressClass, address: bare };
  const answer = vector.dns ?? FILE.dnsStub[bare];
  const addresses = answer === undefined ? [] : Array.isArray(answer) ? answer : answer.sequence.flat();
  return { blocked: true, reason: addressClass, address: expect.toSatisfy((address: unknown) => addresses.includes(address as string), `one of ${addresses.join(", ")}`) };
}

const eitherOutcomes: string[] = [];
afterAll(() => {
  if (eitherOutcomes.length > 0) {
    console.log(`SSRF "either" vectors (not counted):\n  ${eitherOutcomes.join("\n  ")}`);
  }
});

describe("SSRF vectors: validateUpstreamUrl", () => {
  const named = (expectation: UrlVector["expect"]) =>
    FILE.vectors.filter((vector) => vector.expect === expectation).map((vector) => ({ ...vector, title: `${vector.id} ${vector.input}` }));

  it("has the cases the file promises", () => {
    expect(FILE.vectors.length).toBeGreaterThanOrEqual(379);
    expect(FILE.vectors.every((vector) => ["blocked", "allowed", "either"].includes(vector.expect))).toBe(true);
  });

  async function run(vector: UrlVector): Promise<Outcome> {
    const input = vector.input.replaceAll("{P1}", String(p1.port));
    const table = { ...FILE.dnsStub };
    if (vector.dns !== undefined) table[new URL(input).hostname] = vector.dns;
    const { guard, stub } = guardFor([`127.0.0.1:${p1.port}`], table);
    const outcome = await outcomeOf(guard, input);
    expect(stub.unknown, `${vector.id} asked the stub for a name it has no answer for`).toEqual([]);
    return outcome;
  }

  it.each(named("blocked"))("blocks $title", async (vector) => {
    const outcome = await run(vector);
    expect(outcome, `${vector.case}${vector.note ? ` (${vector.note})` : ""}`).toEqual(expectedBlock(vector));
  });

  it.each(named("allowed"))("allows $title", async (vector) => {
    const outcome = await run(vector);
    expect(outcome, `${vector.case}${vector.note ? ` (${vector.note})` : ""}`).toEqual({ blocked: false });
  });

  // it.for, not it.each: it hands the test context (and its annotate) to the callback.
  it.for(named("either"))("reports $title (either is acceptable)", async (vector, { annotate }) => {
    const outcome = await run(vector);
    const shown = outcome.blocked ? `blocked (${String(outcome.reason)})` : "allowed";
    eitherOutcomes.push(`${vector.id} ${vector.input}: ${shown}`);
    await annotate(`outcome: ${shown}`);
  });
});

describe("SSRF vectors: safeFetch against real loopback servers", () => {
  // {P2}: a loopback server that nothing exempts; the cases that must not connect to it
  // check its connection count. {P3}: the rebinding case's port, served on 127.0.0.1 and,
  // where the machine routes it, 127.0.0.2.
  let p2: Harness;
  let p3: Harness;
  beforeAll(async () => {
    p2 = await listen((_req, res) => res.end("p2"));
    p3 = await listen((_req, res) => res.end("first"));
    // Without it, a second lookup would still fail the case (nothing listens there), just
    // with a connection error instead of the wrong body.
    const second = await listen((_req, res) => res.end("second"), "127.0.0.2", p3.port).catch(() => null);
    if (second === null) console.log("127.0.0.2 is not routable here: sf-7 checks the lookup count and a refused connection");
  });

  const fill = (text: string) =>
    text
      .replaceAll("{allowed}", `http://127.0.0.1:${p1.port}`)
      .replaceAll("{notAllowed}", `http://127.0.0.1:${p2.port}`)
      .replaceAll("{P1}", String(p1.port))
      .replaceAll("{P2}", String(p2.port))
      .replaceAll("{P3}", String(p3.port));

  it.each(FILE.safeFetch.map((vector) => ({ ...vector, title: `${vector.id} ${vector.input}` })))("$title", async (vector) => {
    // The exempt upstream, and the rebinding name as server.outbound.allow would list it.
    const { guard, stub } = guardFor([`127.0.0.1:${p1.port}`, `rebind.peers.test:${p3.port}`], FILE.dnsStub);
    const before = p2.connections;
    const result = await guard.safeFetch(fill(vector.input)).then(
      async (response) => ({ ok: true as const, status: response.status, body: await response.text() }),
      (error: unknown) => ({ ok: false as const, error: error as Error & { code?: string; details?: Record<string, unknown> } }),
    );
    const expected = vector.expect;
    if (expected.ok) {
      expect(result.ok ? { status: result.status, body: result.body } : result.error).toEqual({ status: expected.status, body: expected.body });
      if (expected.lookups !== undefined) expect(stub.lookups).toHaveLength(expected.lookups);
    } else {
      expect(result.ok, vector.case).toBe(false);
      if (result.ok) return;
      expect(result.error.code).toBe(expected.code);
      expect(result.error).toBeInstanceOf(expected.code === "SSRF_REDIRECT" ? SsrfRedirectError : SsrfBlockedError);
      if (expected.location !== undefined) expect(result.error.details?.location).toBe(fill(expected.location));
      if (expected.noConnection) expect(p2.connections - before).toBe(0);
    }
  });
});
