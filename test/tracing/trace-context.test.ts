// The W3C Trace Context rules of src/tracing/trace-context.ts (docs/guides/deployment.md "Tracing"):
// which traceparent and tracestate headers are continued, and the ids made for new traces.
import { describe, expect, it } from "vitest";
import {
  formatTraceparent,
  parseTraceparent,
  parseTracestate,
  randomSpanId,
  randomTraceId,
} from "../../dist/tracing/trace-context.js";
import { isWellFormedRequestId, requestIdFor } from "../../dist/tracing/request-id.js";

const TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736";
const PARENT_ID = "00f067aa0ba902b7";

describe("traceparent", () => {
  it("reads a version 00 header", () => {
    expect(parseTraceparent(`00-${TRACE_ID}-${PARENT_ID}-01`)).toEqual({ traceId: TRACE_ID, parentId: PARENT_ID, flags: 1 });
    expect(parseTraceparent(`00-${TRACE_ID}-${PARENT_ID}-00`)).toEqual({ traceId: TRACE_ID, parentId: PARENT_ID, flags: 0 });
  });

  it("reads a later version by its first 55 characters when a dash follows them", () => {
    expect(parseTraceparent(`cc-${TRACE_ID}-${PARENT_ID}-01`)).toEqual({ traceId: TRACE_ID, parentId: PARENT_ID, flags: 1 });
    expect(parseTraceparent(`cc-${TRACE_ID}-${PARENT_ID}-01-what-the-future-holds`)).toEqual({ traceId: TRACE_ID, parentId: PARENT_ID, flags: 1 });
    expect(parseTraceparent(`cc-${TRACE_ID}-${PARENT_ID}-01x`)).toBeNull();
  });

  it("refuses every header that breaks a rule, so that a new trace starts", () => {
    const broken = [
      undefined,
      "",
      "garbage",
      `00-${TRACE_ID}-${PARENT_ID}-1`,
      `00-${TRACE_ID}-${PARENT_ID}-01-`, // version 00 has nothing after its flags
      `00-${TRACE_ID}-${PARENT_ID}-01 `,
      `ff-${TRACE_ID}-${PARENT_ID}-01`, // the forbidden version
      `00-${"0".repeat(32)}-${PARENT_ID}-01`, // all-zero trace id
      `00-${TRACE_ID}-${"0".repeat(16)}-01`, // all-zero parent id
      `00-${TRACE_ID.toUpperCase()}-${PARENT_ID}-01`, // only lowercase hex
      `00-${TRACE_ID}-${PARENT_ID.toUpperCase()}-01`,
      `0x-${TRACE_ID}-${PARENT_ID}-01`,
      `00-${TRACE_ID}-${PARENT_ID}-0g`,
      `00-${TRACE_ID.slice(1)}z-${PARENT_ID}-01`,
      `00_${TRACE_ID}_${PARENT_ID}_01`,
      // Two headers, as Node joins them.
      `00-${TRACE_ID}-${PARENT_ID}-01, 00-${TRACE_ID}-${PARENT_ID}-01`,
      [`00-${TRACE_ID}-${PARENT_ID}-01`],
    ];
    for (const header of broken) expect([header, parseTraceparent(header as string)]).toEqual([header, null]);
  });

  it("writes version 00 with two hex digits of flags", () => {
    expect(formatTraceparent(TRACE_ID, PARENT_ID, 1)).toBe(`00-${TRACE_ID}-${PARENT_ID}-01`);
    expect(formatTraceparent(TRACE_ID, PARENT_ID, 0)).toBe(`00-${TRACE_ID}-${PARENT_ID}-00`);
    expect(formatTraceparent(TRACE_ID, PARENT_ID, 0xab)).toBe(`00-${TRACE_ID}-${PARENT_ID}-ab`);
  });
});

describe("tracestate", () => {
  it("passes on a valid header, normalised", () => {
    expect(parseTracestate("congo=t61rcWkgMzE")).toBe("congo=t61rcWkgMzE");
    expect(parseTracestate("rojo=00f067aa0ba902b7 ,  congo=t61rcWkgMzE,,")).toBe("rojo=00f067aa0ba902b7,congo=t61rcWkgMzE");
    expect(parseTracestate("tenant@vendor=a b,x/y*z_-=1")).toBe("tenant@vendor=a b,x/y*z_-=1");
  });

  it("drops a header that fails to parse: a bad key or value, a key twice, more than 32 entries", () => {
    const broken = [
      undefined,
      "",
      " , ",
      "Congo=x",
      "congo",
      "congo=",
      "congo=a,b",
      "congo=a=b",
      "congo=x\u00e9",
      "congo=1,congo=2",
      "1abc=x",
      "tenant@Vendor=x",
      "tenant@vendor-with-too-long-a-name=x",
      Array.from({ length: 33 }, (_, i) => `k${i}=v`).join(","),
    ];
    for (const header of broken) expect([header, parseTracestate(header)]).toEqual([header, undefined]);
  });

  it("keeps 32 entries, and cuts a header over 512 characters: long entries first, then from the end", () => {
    const thirtyTwo = Array.from({ length: 32 }, (_, i) => `k${i}=v`).join(",");
    expect(parseTracestate(thirtyTwo)).toBe(thirtyTwo);
    const long = `long=${"x".repeat(200)}`;
    const short = Array.from({ length: 20 }, (_, i) => `key${i}=${"v".repeat(20)}`);
    const cut = parseTracestate([short[0], long, ...short.slice(1)].join(","))!;
    expect(cut.length).toBeLessThanOrEqual(512);
    expect(cut).not.toContain("long=");
    expect(cut.startsWith(short.slice(0, 5).join(","))).toBe(true);
    expect(cut.split(",").length).toBeLessThan(20);
  });
});

describe("ids", () => {
  it("makes lowercase hex ids of the spec's lengths, different each time", () => {
    const traces = new Set(Array.from({ length: 500 }, () => randomTraceId()));
    const spans = new Set(Array.from({ length: 500 }, () => randomSpanId()));
    expect(traces.size).toBe(500);
    expect(spans.size).toBe(500);
    for (const id of traces) expect(id).toMatch(/^[0-9a-f]{32}$/);
    for (const id of spans) expect(id).toMatch(/^[0-9a-f]{16}$/);
  });
});

describe("X-Request-Id", () => {
  it("uses 1 to 128 characters of letters, digits and . _ : -", () => {
    for (const id of ["a", "req-1", "0f8fad5b-d9cb-469f-a165-70867728950e", "lb:1.2_3", "x".repeat(128)]) {
      expect(isWellFormedRequestId(id)).toBe(true);
      expect(requestIdFor(id, true)).toBe(id);
    }
  });

  it("makes a new id for anything else, and for every request when not trusting incoming ids", () => {
    for (const id of [undefined, "", "x".repeat(129), "a b", "a,b", "a, b", "<script>", "é", "a\tb", "id/1", ["a", "b"]]) {
      expect(isWellFormedRequestId(id)).toBe(false);
      expect(requestIdFor(id as string, true)).toMatch(/^[0-9a-f-]{36}$/);
    }
    expect(requestIdFor("req-1", false)).toMatch(/^[0-9a-f-]{36}$/);
  });
});
