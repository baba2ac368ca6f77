import ipaddr from "ipaddr.js";
import { describe, expect, it } from "vitest";
import { blockedReason } from "../../src/outbound/classify-address.js";

type Subnet = [ipaddr.IPv4 | ipaddr.IPv6, number];
type RangeTable = Record<string, Subnet | Subnet[]>;

// The library's own table, read at run time: a range added by a newer ipaddr.js is
// covered by the "everything but unicast is blocked" test without touching this file.
function specialRanges(prototype: object): Array<[string, Subnet]> {
  const table = (prototype as { SpecialRanges: RangeTable }).SpecialRanges;
  const out: Array<[string, Subnet]> = [];
  for (const [name, subnets] of Object.entries(table)) {
    const list = (Array.isArray(subnets[0]) ? subnets : [subnets]) as Subnet[];
    for (const subnet of list) out.push([name, subnet]);
  }
  return out;
}

describe("blockedReason", () => {
  it.each([
    ["127.0.0.1", "loopback"],
    ["127.255.255.254", "loopback"],
    ["0.0.0.0", "unspecified"],
    ["0.1.2.3", "unspecified"],
    ["255.255.255.255", "broadcast"],
    ["10.0.0.1", "private"],
    ["172.16.0.1", "private"],
    ["172.31.255.255", "private"],
    ["192.168.1.1", "private"],
    ["169.254.169.254", "linkLocal"],
    ["100.64.0.1", "carrierGradeNat"],
    ["100.127.255.255", "carrierGradeNat"],
    ["224.0.0.1", "multicast"],
    ["239.255.255.250", "multicast"],
    ["198.18.0.1", "reserved"],
    ["198.19.255.255", "reserved"],
    ["192.0.0.8", "reserved"],
    ["192.0.2.1", "reserved"],
    ["198.51.100.7", "reserved"],
    ["203.0.113.9", "reserved"],
    ["240.0.0.1", "reserved"],
    ["192.175.48.1", "as112"],
    ["192.52.193.1", "amt"],
    ["::1", "loopback"],
    ["::", "unspecified"],
    ["::ffff:127.0.0.1", "loopback"],
    ["0:0:0:0:0:ffff:7f00:1", "loopback"],
    ["::ffff:a9fe:a9fe", "linkLocal"],
    ["::ffff:10.1.2.3", "private"],
    ["::ffff:0:127.0.0.1", "rfc6145:loopback"],
    ["64:ff9b::127.0.0.1", "rfc6052:loopback"],
    ["64:ff9b::a9fe:a9fe", "rfc6052:linkLocal"],
    ["64:ff9b:1::808:808", "rfc6052"],
    ["2002:7f00:1::", "6to4:loopback"],
    ["2002:c0a8:101::1", "6to4:private"],
    ["2001::1", "teredo"],
    ["2001:0:4136:e378:8000:63bf:3fff:fdd2", "teredo"],
    ["fe80::1", "linkLocal"],
    ["fe80::1%eth0", "linkLocal"],
    ["fd00:ec2::254", "uniqueLocal"],
    ["fc00::1", "uniqueLocal"],
    ["ff02::1", "multicast"],
    ["fec0::1", "deprecatedSiteLocal"],
    ["100::1", "discard"],
    ["2001:db8::1", "reserved"],
    ["3fff::1", "reserved"],
    ["2001:2::1", "benchmarking"],
    ["5f00::1", "segmentRouting"],
    ["::7f00:1", "reserved"], // IPv4-compatible ::127.0.0.1, outside 2000::/3
    ["4000::1", "reserved"],
  ])("blocks %s as %s", (address, reason) => {
    expect(blockedReason(address)).toBe(reason);
  });

  it.each([
    "93.184.215.14",
    "8.8.8.8",
    "1.1.1.1",
    "2606:4700::1",
    "2a00:1450:4001:80b::200e",
    "::ffff:8.8.8.8",
    "64:ff9b::8.8.8.8",
    "2002:808:808::1",
  ])("lets the public address %s through", (address) => {
    expect(blockedReason(address)).toBeNull();
  });

  it.each(["", "example.com", "[::1]", "1.2.3.4.5", "::1::1", "300.1.1.1"])(
    "treats %j as not an address",
    (address) => {
      expect(blockedReason(address)).toBe("invalid-address");
    },
  );

  it.each([
    ...specialRanges(ipaddr.IPv4.prototype),
    ...specialRanges(ipaddr.IPv6.prototype),
  ])("blocks every address ipaddr.js files under %s (%s)", (name, [network, bits]) => {
    // First address of the range, and one deep inside it.
    const first = network.toString();
    const bytes = network.toByteArray();
    const inside = [...bytes];
    const lastByte = Math.floor((bits - 1) / 8) + 1;
    if (lastByte < inside.length) inside[inside.length - 1] = 0x7f;
    const deep = ipaddr.fromByteArray(inside).toString();
    expect(blockedReason(first), `${name}: ${first}`).not.toBeNull();
    expect(blockedReason(deep), `${name}: ${deep}`).not.toBeNull();
  });
});
