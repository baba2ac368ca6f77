import ipaddr from "ipaddr.js";

/*
 * Which addresses an outbound request may reach. Only what ipaddr.js 2.5 calls
 * "unicast" passes; every special range is blocked. Its range names, decided one by one:
 *
 * IPv4: unspecified (0/8), broadcast, multicast, linkLocal (incl. 169.254.169.254, the
 *   cloud metadata service), loopback, carrierGradeNat (100.64/10), private (RFC 1918),
 *   reserved (192.0.0/24, the three TEST-NETs, 192.88.99/24, benchmarking 198.18/15,
 *   240/4), as112 (anycast sinks for private reverse DNS), amt (relay anycast): blocked.
 * IPv6: unspecified, loopback, linkLocal, multicast, uniqueLocal (fc00::/7),
 *   deprecatedSiteLocal, discard (100::/64), benchmarking, amt, as112v6,
 *   deprecatedOrchid, orchid2, droneRemoteIdProtocolEntityTags (identifiers, not
 *   destinations), segmentRouting, reserved (2001::/23, 2001:db8::/32, 3fff::/20): blocked.
 *   ipv4Mapped: `ipaddr.process` turns it into the IPv4 it carries, classified as such.
 *   rfc6145 (::ffff:0:a.b.c.d), rfc6052 64:ff9b::/96 (NAT64) and 6to4 (2002::/16): the
 *   embedded IPv4 is extracted and classified; blocked when it is not unicast.
 *   rfc6052 64:ff9b:1::/48 (RFC 8215 local-use NAT64): blocked outright, as the operator
 *   picks where the IPv4 sits inside it, so it cannot be extracted reliably.
 *   teredo (2001::/32): blocked outright; the client IPv4 is obfuscated and the server
 *   part names a relay, and no legitimate upstream of a server lives behind Teredo.
 * A name that is not listed here (a newer ipaddr.js) is not "unicast", so it is blocked:
 * the table fails closed.
 */

/*
 * IANA allocates global unicast IPv6 only out of 2000::/3; the rest is IETF-reserved.
 * ipaddr.js calls e.g. `::7f00:1` "unicast", yet that is a deprecated IPv4-compatible
 * address (RFC 4291 2.5.5.1) that some stacks still route to 127.0.0.1.
 */
const GLOBAL_UNICAST_V6 = ipaddr.parseCIDR("2000::/3");
const NAT64_WELL_KNOWN = ipaddr.parseCIDR("64:ff9b::/96");

/**
 * Why `address` must not be reached, or null when it is a public unicast address.
 * `address` is an IP literal without brackets (as DNS returns it); anything else
 * yields `invalid-address`. Pure: no I/O.
 */
export function blockedReason(address: string): string | null {
  let parsed: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    parsed = ipaddr.process(address);
  } catch {
    return "invalid-address";
  }
  return parsed.kind() === "ipv4" ? ipv4Reason(parsed as ipaddr.IPv4) : ipv6Reason(parsed as ipaddr.IPv6);
}

function ipv4Reason(address: ipaddr.IPv4): string | null {
  // `range()` is typed as a closed union, but the library may add names: compare as string.
  const range: string = address.range();
  return range === "unicast" ? null : range;
}

function ipv6Reason(address: ipaddr.IPv6): string | null {
  const range: string = address.range();
  switch (range) {
    case "unicast":
      return address.match(GLOBAL_UNICAST_V6) ? null : "reserved";
    case "ipv4Mapped":
    case "rfc6145":
      return embeddedReason(range, fromParts(address.parts[6], address.parts[7]));
    case "rfc6052":
      return address.match(NAT64_WELL_KNOWN)
        ? embeddedReason(range, fromParts(address.parts[6], address.parts[7]))
        : range;
    case "6to4":
      // 2002:AABB:CCDD::/48 carries the site's IPv4 AA.BB.CC.DD (RFC 3056).
      return embeddedReason(range, fromParts(address.parts[1], address.parts[2]));
    default:
      return range;
  }
}

function embeddedReason(range: string, embedded: ipaddr.IPv4): string | null {
  const inner = ipv4Reason(embedded);
  return inner === null ? null : `${range}:${inner}`;
}

function fromParts(high: number | undefined, low: number | undefined): ipaddr.IPv4 {
  const hi = high ?? 0;
  const lo = low ?? 0;
  return new ipaddr.IPv4([hi >> 8, hi & 0xff, lo >> 8, lo & 0xff]);
}
