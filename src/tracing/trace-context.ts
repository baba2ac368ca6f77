/**
 * W3C Trace Context (https://www.w3.org/TR/trace-context/): reading `traceparent` and
 * `tracestate`, writing a child `traceparent`, and making ids. Pure functions over strings;
 * src/tracing/request-trace.ts puts them together for a request. Imports nothing of ours.
 */
import { randomFillSync } from "node:crypto";

/** What a method sees as `ctx.trace` (docs/guides/server-methods.md "Server methods"): plain, frozen, serialisable. */
export interface TraceContext {
  /** 32 lowercase hex digits, shared by every span of the trace. */
  readonly traceId: string;
  /** 16 lowercase hex digits: this call's span (the OpenTelemetry span's id when an SDK records it). */
  readonly spanId: string;
  /** The span this call continues (the caller's, from its `traceparent`); undefined for a trace this server started. */
  readonly parentSpanId: string | undefined;
  /** The caller's (or the sampler's) decision to record the trace. */
  readonly sampled: boolean;
  /** `00-<traceId>-<spanId>-<flags>`: the header to send on a request made for this call, so that it is this span's child. */
  readonly traceparent: string;
  /** The caller's `tracestate`, checked, to send on with `traceparent`; undefined without one. */
  readonly tracestate: string | undefined;
}

/** A `traceparent` that passed every rule of the spec. */
export interface TraceParent {
  traceId: string;
  /** The caller's span id. */
  parentId: string;
  /** The trace-flags byte; bit 0 is "sampled". */
  flags: number;
}

const VERSION_00_LENGTH = 55;
const FIELDS = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;
const ZERO_TRACE_ID = "0".repeat(32);
const ZERO_SPAN_ID = "0".repeat(16);

/**
 * The header's fields, or null when the header is missing or breaks a rule, in which case
 * the spec says to start a new trace. Version `ff` is forbidden; version 00 is exactly 55
 * characters; a later version is read as 00 when its first 55 characters fit and a `-`
 * follows them. An all-zero trace id or parent id is invalid; only lowercase hex is valid.
 * Node joins a repeated header with ", ", which no rule accepts: two headers are none.
 */
export function parseTraceparent(header: string | string[] | undefined): TraceParent | null {
  if (typeof header !== "string" || header.length < VERSION_00_LENGTH) return null;
  let value = header;
  if (header.length > VERSION_00_LENGTH) {
    if (header.startsWith("00") || header[VERSION_00_LENGTH] !== "-") return null;
    value = header.slice(0, VERSION_00_LENGTH);
  }
  const fields = FIELDS.exec(value);
  if (!fields || fields[1] === "ff") return null;
  const traceId = fields[2]!;
  const parentId = fields[3]!;
  if (traceId === ZERO_TRACE_ID || parentId === ZERO_SPAN_ID) return null;
  return { traceId, parentId, flags: parseInt(fields[4]!, 16) };
}

/** The spec's limits: vendors need not pass on more than 512 characters or 32 entries. */
const TRACESTATE_MAX_LENGTH = 512;
const TRACESTATE_MAX_MEMBERS = 32;
/** Entries over this length are the first to go when the header is too long (the spec's advice). */
const TRACESTATE_LONG_MEMBER = 128;
const MEMBER = /^([a-z][a-z0-9_\-*/]{0,255}|[a-z0-9][a-z0-9_\-*/]{0,240}@[a-z][a-z0-9_\-*/]{0,13})=([\x20-\x2b\x2d-\x3c\x3e-\x7e]{0,255}[\x21-\x2b\x2d-\x3c\x3e-\x7e])$/;
/** Far beyond what could be cut down to 512 characters: not worth splitting. */
const TRACESTATE_READ_LIMIT = 8192;

/**
 * The header normalised (entries joined by ","), or undefined when it is missing, holds an
 * entry that breaks the grammar, names a key twice or has more than 32 entries: a header
 * that fails to parse is not passed on. Over 512 characters, entries over 128 are dropped,
 * then entries from the end, as the spec advises.
 */
export function parseTracestate(header: string | string[] | undefined): string | undefined {
  if (typeof header !== "string" || header.length > TRACESTATE_READ_LIMIT) return undefined;
  const members: string[] = [];
  const keys = new Set<string>();
  for (const part of header.split(",")) {
    const member = part.trim();
    if (member === "") continue;
    const match = MEMBER.exec(member);
    if (!match || keys.has(match[1]!)) return undefined;
    keys.add(match[1]!);
    members.push(member);
  }
  if (members.length === 0 || members.length > TRACESTATE_MAX_MEMBERS) return undefined;
  let joined = members.join(",");
  if (joined.length <= TRACESTATE_MAX_LENGTH) return joined;
  const kept = members.filter((member) => member.length <= TRACESTATE_LONG_MEMBER);
  joined = kept.join(",");
  while (joined.length > TRACESTATE_MAX_LENGTH) {
    kept.pop();
    joined = kept.join(",");
  }
  return joined === "" ? undefined : joined;
}

/** `00-<traceId>-<spanId>-<flags>`. */
export function formatTraceparent(traceId: string, spanId: string, flags: number): string {
  return `00-${traceId}-${spanId}-${flags < 16 ? "0" : ""}${flags.toString(16)}`;
}

export function traceContextOf(traceId: string, spanId: string, flags: number, parentSpanId?: string, tracestate?: string): TraceContext {
  return Object.freeze({
    traceId,
    spanId,
    parentSpanId,
    sampled: (flags & 1) === 1,
    traceparent: formatTraceparent(traceId, spanId, flags),
    tracestate,
  });
}

// Ids come from the system's random source, read in blocks: one `randomFillSync` per 170
// traces rather than one per id (each call costs about a microsecond).
const POOL = Buffer.allocUnsafe(4096);
let poolOffset = POOL.length;

function randomHex(bytes: number, zero: string): string {
  for (;;) {
    if (poolOffset + bytes > POOL.length) {
      randomFillSync(POOL);
      poolOffset = 0;
    }
    const hex = POOL.toString("hex", poolOffset, poolOffset + bytes);
    poolOffset += bytes;
    // All zeros is the spec's invalid id; a second draw is as unlikely to be.
    if (hex !== zero) return hex;
  }
}

export function randomTraceId(): string {
  return randomHex(16, ZERO_TRACE_ID);
}

export function randomSpanId(): string {
  return randomHex(8, ZERO_SPAN_ID);
}
