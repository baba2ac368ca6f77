import { describe, expect, it } from "vitest";
import { SsrfBlockedError } from "../../src/outbound/errors.js";
import { createOutboundGuard, type OutboundGuardOptions } from "../../src/outbound/guard.js";

type Answer = { address: string; family: 4 | 6 };

/** A resolver that never touches the network: unknown names fail like NXDOMAIN. */
function stubResolver(table: Record<string, string[]>) {
  const calls: string[] = [];
  const resolve = async (hostname: string): Promise<Answer[]> => {
    calls.push(hostname);
    const answers = Object.hasOwn(table, hostname) ? table[hostname] : undefined;
    if (answers === undefined) {
      throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: "ENOTFOUND" });
    }
    return answers.map((address) => ({ address, family: address.includes(":") ? 6 : 4 }));
  };
  return { resolve, calls };
}

const DNS = {
  "example.com": ["93.184.215.14", "2606:2800:21f:cb07:6820:80da:af6b:8b2c"],
  "public.test": ["8.8.8.8"],
  "mixed.test": ["93.184.215.14", "10.0.0.5"],
  "mixed6.test": ["2606:4700::1", "fd00::5"],
  "metadata.test": ["169.254.169.254"],
  "mapped.test": ["::ffff:127.0.0.1"],
  "empty.test": [],
  "garbage.test": ["not-an-ip"],
};

function guardWith(options: Omit<OutboundGuardOptions, "resolve"> = {}, table: Record<string, string[]> = DNS) {
  const stub = stubResolver(table);
  return { guard: createOutboundGuard({ ...options, resolve: stub.resolve }), calls: stub.calls };
}

async function rejection(promise: Promise<unknown>): Promise<SsrfBlockedError> {
  const outcome = await promise.then(
    (value) => ({ ok: true as const, value }),
    (error: unknown) => ({ ok: false as const, error }),
  );
  if (outcome.ok) throw new Error(`expected a block, got ${String(outcome.value)}`);
  expect(outcome.error).toBeInstanceOf(SsrfBlockedError);
  const err = outcome.error as SsrfBlockedError;
  expect(err.code).toBe("SSRF_BLOCKED");
  expect(err.name).toBe("SsrfBlockedError");
  return err;
}

describe("validateUpstreamUrl: blocked vectors", () => {
  it.each([
    ["http://127.0.0.1/", "loopback", "127.0.0.1"],
    ["http://2130706433/", "loopback", "127.0.0.1"],
    ["http://0x7f000001/", "loopback", "127.0.0.1"],
    ["http://0177.0.0.1/", "loopback", "127.0.0.1"],
    ["http://017700000001/", "loopback", "127.0.0.1"],
    ["http://127.1/", "loopback", "127.0.0.1"],
    ["http://127.0.0.1./", "loopback", "127.0.0.1"],
    ["http://0/", "unspecified", "0.0.0.0"],
    ["http://0.0.0.0/", "unspecified", "0.0.0.0"],
    ["http://0251.0376.0251.0376/", "linkLocal", "169.254.169.254"],
    ["http://[::1]/", "loopback", "::1"],
    ["http://[::]/", "unspecified", "::"],
    ["http://[::ffff:127.0.0.1]/", "loopback", "::ffff:7f00:1"],
    ["http://[0:0:0:0:0:ffff:127.0.0.1]/", "loopback", "::ffff:7f00:1"],
    ["http://[::ffff:a9fe:a9fe]/", "linkLocal", "::ffff:a9fe:a9fe"],
    ["http://[64:ff9b::127.0.0.1]/", "rfc6052:loopback", "64:ff9b::7f00:1"],
    ["http://[2002:7f00:1::]/", "6to4:loopback", "2002:7f00:1::"],
    ["http://[2001:0:4136:e378:8000:63bf:3fff:fdd2]/", "teredo", "2001:0:4136:e378:8000:63bf:3fff:fdd2"],
    ["http://[fe80::1]/", "linkLocal", "fe80::1"],
    ["http://[fd00:ec2::254]/", "uniqueLocal", "fd00:ec2::254"],
    ["http://[ff02::1]/", "multicast", "ff02::1"],
    ["http://10.0.0.1/", "private", "10.0.0.1"],
    ["http://172.16.0.1/", "private", "172.16.0.1"],
    ["http://192.168.1.1/", "private", "192.168.1.1"],
    ["http://169.254.169.254/latest/meta-data/", "linkLocal", "169.254.169.254"],
    ["http://100.64.0.1/", "carrierGradeNat", "100.64.0.1"],
    ["http://224.0.0.1/", "multicast", "224.0.0.1"],
    ["http://198.18.0.1/", "reserved", "198.18.0.1"],
    ["http://255.255.255.255/", "broadcast", "255.255.255.255"],
    ["http://192.0.2.10/", "reserved", "192.0.2.10"],
    ["http://evil@127.0.0.1/", "loopback", "127.0.0.1"],
    ["http://127.1.1.1:80@127.2.2.2:80/", "loopback", "127.2.2.2"],
    ["https://[::1]:8443/x", "loopback", "::1"],
    ["http:\\\\127.0.0.1\\", "loopback", "127.0.0.1"],
    ["http://[::7f00:1]/", "reserved", "::7f00:1"],
  ])("%s is blocked (%s)", async (url, reason, address) => {
    const { guard, calls } = guardWith();
    const err = await rejection(guard.validateUpstreamUrl(url));
    expect(err.details.reason).toBe(reason);
    expect(err.details.address).toBe(address);
    expect(calls).toEqual([]); // IP literals are never handed to DNS
  });

  it.each(["http://localhost/", "http://localhost./", "http://LOCALHOST:8080/", "http://api.localhost/", "http://a.b.localhost./", "http://local%68ost/"])(
    "%s is blocked by name before any lookup",
    async (url) => {
      const { guard, calls } = guardWith({}, { localhost: ["93.184.215.14"], "api.localhost": ["93.184.215.14"] });
      const err = await rejection(guard.validateUpstreamUrl(url));
      expect(err.details.reason).toBe("localhost");
      expect(calls).toEqual([]);
    },
  );

  it.each(["file:///etc/passwd", "ftp://example.com/", "gopher://127.0.0.1/", "javascript:alert(1)", "data:text/plain,hi", "ws://example.com/"])(
    "%s is blocked for its scheme",
    async (url) => {
      const { guard, calls } = guardWith();
      const err = await rejection(guard.validateUpstreamUrl(url));
      expect(err.details.reason).toBe("scheme");
      expect(calls).toEqual([]);
    },
  );

  it.each(["http://425.510.425.510/", "not a url", "", "http://", "http://[::1/", "http://1.2.3.4.5/", "//example.com/"])(
    "%j is blocked as invalid-url, not a crash",
    async (url) => {
      const err = await rejection(createOutboundGuard().validateUpstreamUrl(url));
      expect(err.details.reason).toBe("invalid-url");
      expect(err.details.url).toBeUndefined();
    },
  );

  it("blocks a name when any one of its addresses is private (IPv4 and IPv6)", async () => {
    const { guard } = guardWith();
    const v4 = await rejection(guard.validateUpstreamUrl("https://mixed.test/"));
    expect(v4.details).toMatchObject({ reason: "private", address: "10.0.0.5" });
    const v6 = await rejection(guard.validateUpstreamUrl("https://mixed6.test/"));
    expect(v6.details).toMatchObject({ reason: "uniqueLocal", address: "fd00::5" });
  });

  it("blocks names resolving to metadata, mapped loopback, nothing, or garbage", async () => {
    const { guard } = guardWith();
    expect((await rejection(guard.validateUpstreamUrl("http://metadata.test/"))).details.reason).toBe("linkLocal");
    expect((await rejection(guard.validateUpstreamUrl("http://mapped.test/"))).details.reason).toBe("loopback");
    expect((await rejection(guard.validateUpstreamUrl("http://empty.test/"))).details.reason).toBe("unresolvable");
    expect((await rejection(guard.validateUpstreamUrl("http://garbage.test/"))).details.reason).toBe("invalid-address");
  });

  it("turns a DNS failure into dns-failure, keeping the cause", async () => {
    const { guard, calls } = guardWith();
    const err = await rejection(guard.validateUpstreamUrl("http://nxdomain.test/"));
    expect(err.details.reason).toBe("dns-failure");
    expect((err.cause as { code?: string }).code).toBe("ENOTFOUND");
    expect(calls).toEqual(["nxdomain.test"]);
  });

  it("never reports credentials from the URL", async () => {
    const { guard } = guardWith();
    const err = await rejection(guard.validateUpstreamUrl("http://admin:s3cret@10.0.0.1:8080/path?q=1"));
    expect(err.details.url).toBe("http://10.0.0.1:8080/path?q=1");
    expect(err.message).not.toContain("s3cret");
  });
});

describe("validateUpstreamUrl: what passes", () => {
  it.each([
    ["http://93.184.215.14/", "93.184.215.14"],
    ["https://[2606:4700::1]/", "[2606:4700::1]"],
    ["http://[::ffff:8.8.8.8]/", "[::ffff:808:808]"],
    ["https://example.com/a?b=c", "example.com"],
    ["http://public.test:8080/", "public.test"],
    ["HTTPS://EXAMPLE.COM/", "example.com"],
  ])("%s passes", async (input, hostname) => {
    const { guard } = guardWith();
    const url = await guard.validateUpstreamUrl(input);
    expect(url).toBeInstanceOf(URL);
    expect(url.hostname).toBe(hostname);
  });

  it("resolves a name once, with every address checked", async () => {
    const { guard, calls } = guardWith();
    await guard.validateUpstreamUrl("https://example.com/");
    expect(calls).toEqual(["example.com"]);
  });

  it("returns a copy, so mutating the caller's URL afterwards changes nothing", async () => {
    const { guard } = guardWith();
    const input = new URL("https://example.com/");
    const url = await guard.validateUpstreamUrl(input);
    input.hostname = "127.0.0.1";
    expect(url.hostname).toBe("example.com");
    expect(url).not.toBe(input);
  });
});

describe("server.outbound.allow", () => {
  it("exempts a host on any port when no port is given", async () => {
    const { guard } = guardWith({ allow: ["10.0.0.1", "internal.test"] }, { "internal.test": ["192.168.7.7"] });
    await expect(guard.validateUpstreamUrl("http://10.0.0.1:9000/")).resolves.toBeInstanceOf(URL);
    await expect(guard.validateUpstreamUrl("https://internal.test/")).resolves.toBeInstanceOf(URL);
    const other = await rejection(guard.validateUpstreamUrl("http://10.0.0.2/"));
    expect(other.details.reason).toBe("private");
  });

  it("is port-specific when a port is given, with 80/443 as the URL's default", async () => {
    const { guard } = guardWith({ allow: ["127.0.0.1:8080", "127.0.0.1:80", "[::1]:443"] });
    await expect(guard.validateUpstreamUrl("http://127.0.0.1:8080/")).resolves.toBeInstanceOf(URL);
    await expect(guard.validateUpstreamUrl("http://127.0.0.1/")).resolves.toBeInstanceOf(URL);
    await expect(guard.validateUpstreamUrl("https://[::1]/")).resolves.toBeInstanceOf(URL);
    const wrongPort = await rejection(guard.validateUpstreamUrl("http://127.0.0.1:8081/"));
    expect(wrongPort.details.reason).toBe("loopback");
    const httpsDefault = await rejection(guard.validateUpstreamUrl("https://127.0.0.1/"));
    expect(httpsDefault.details.reason).toBe("loopback");
  });

  it("matches however the URL spells the host", async () => {
    const { guard } = guardWith({ allow: ["LOCALHOST", "0x7f000001:81", "0:0::1"] }, { localhost: ["127.0.0.1"] });
    await expect(guard.validateUpstreamUrl("http://localhost:3000/")).resolves.toBeInstanceOf(URL);
    await expect(guard.validateUpstreamUrl("http://2130706433:81/")).resolves.toBeInstanceOf(URL);
    await expect(guard.validateUpstreamUrl("http://[::1]:1234/")).resolves.toBeInstanceOf(URL);
    // localhost is exempt by name; its subdomains are not.
    expect((await rejection(guard.validateUpstreamUrl("http://x.localhost/"))).details.reason).toBe("localhost");
  });

  it("still checks schemes and DNS failures for exempt hosts", async () => {
    const { guard } = guardWith({ allow: ["127.0.0.1", "gone.test"] });
    expect((await rejection(guard.validateUpstreamUrl("ftp://127.0.0.1/"))).details.reason).toBe("scheme");
    expect((await rejection(guard.validateUpstreamUrl("http://gone.test/"))).details.reason).toBe("dns-failure");
  });

  it.each(["http://example.com", "example.com/path", "a:b:c", "host:0", "host:65536", "user@host", "[::1", ""])(
    "rejects the malformed entry %j at creation",
    (entry) => {
      expect(() => createOutboundGuard({ allow: [entry] })).toThrow(TypeError);
    },
  );

  it("rejects a non-positive timeout at creation", () => {
    expect(() => createOutboundGuard({ timeoutMs: 0 })).toThrow(TypeError);
    expect(() => createOutboundGuard({ timeoutMs: Number.NaN })).toThrow(TypeError);
  });
});
