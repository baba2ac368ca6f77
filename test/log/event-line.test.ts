// docs/reference/log-events.md: the one event of a call or proxied request is written past
// pino's general path, and must still be the very line pino writes for the same fields.
import { describe, expect, it } from "vitest";
import { pino } from "pino";
import { EventLog } from "../../src/log/event-line.js";
import { createLogger } from "../../src/log/logger.js";

function capture(): { lines: string[]; write(line: string): void } {
  const lines: string[] = [];
  return { lines, write: (line: string) => void lines.push(line) };
}

/** The same event through EventLog and through pino, at a fixed time. */
function both(options: pino.LoggerOptions, fields: Record<string, unknown>, level: "info" | "warn" | "error" = "info", bindings?: Record<string, unknown>, keys?: string[]) {
  const direct = capture();
  const viaPino = capture();
  const make = (stream: { write(line: string): void }) => {
    const root = pino({ base: { pid: 4242 }, timestamp: () => ',"time":1764000000000', ...options }, stream);
    return bindings ? root.child(bindings) : root;
  };
  new EventLog(make(direct), keys).write(level, fields, String(fields.event));
  make(viaPino)[level](fields, String(fields.event));
  return { direct: direct.lines, pino: viaPino.lines };
}

const CALL = {
  event: "rpc.complete",
  reqId: "0b7c6f7e-3f44-4bd7-9d43-6f1b0b1e2a11",
  traceId: undefined,
  kind: "plugin",
  id: "bench",
  method: "echo",
  contextId: null,
  durationMs: 0.123,
  status: 200,
  code: undefined,
  err: undefined,
  events: undefined,
  bytes: undefined,
};

describe("EventLog", () => {
  it("writes the line pino writes: level, time, bindings, fields in order, undefined ones left out, msg", () => {
    const { direct, pino: expected } = both({}, CALL);
    expect(direct).toEqual(expected);
    // With the event's field names declared, in their order or not.
    expect(both({}, CALL, "info", undefined, Object.keys(CALL)).direct).toEqual(expected);
    expect(both({}, CALL, "info", undefined, ["reqId", "event", "status", "extra"]).direct).toEqual(expected);
    expect(JSON.parse(direct[0]!)).toEqual({ level: 30, time: 1764000000000, pid: 4242, ...JSON.parse(JSON.stringify(CALL)), msg: "rpc.complete" });
  });

  it("escapes what JSON must escape, and writes numbers pino's way (non-finite as null), at each level", () => {
    const fields = { event: "proxy.error", method: 'GE"T\\\n\u0001', alias: "a\ud800b", reason: "x".repeat(300), status: 502, durationMs: Number.NaN, code: "PROXY_UPSTREAM_ERROR", ok: false };
    for (const level of ["info", "warn", "error"] as const) {
      const { direct, pino: expected } = both({}, fields, level);
      expect(JSON.parse(direct[0]!)).toEqual(JSON.parse(expected[0]!));
      expect(JSON.parse(direct[0]!)).toMatchObject({ method: 'GE"T\\\n\u0001', durationMs: null, ok: false, level: { info: 30, warn: 40, error: 50 }[level] });
    }
  });

  it("keeps a child logger's bindings, and passes the line through the server's secret masker", () => {
    const { direct, pino: expected } = both({}, { event: "rpc.rejected", method: "echo" }, "warn", { component: "gateway" });
    expect(direct).toEqual(expected);
    expect(JSON.parse(direct[0]!)).toMatchObject({ level: 40, component: "gateway" });
    const served = capture();
    const { logger } = createLogger({ dev: false, destination: served, secrets: ["hunter2-secret"] });
    new EventLog(logger).write("info", { event: "rpc.complete", method: "call-hunter2-secret" }, "rpc.complete");
    expect(served.lines).toHaveLength(1);
    expect(JSON.parse(served.lines[0]!).method).toBe("call-[Redacted]");
  });

  it("leaves an event with an error, and one below the logger's level, to pino", () => {
    const error = new Error("upstream broke");
    const { direct, pino: expected } = both({}, { ...CALL, event: "rpc.error", status: 500, err: error }, "error");
    expect(JSON.parse(direct[0]!)).toEqual(JSON.parse(expected[0]!));
    expect(JSON.parse(direct[0]!).err).toMatchObject({ type: "Error", message: "upstream broke", stack: expect.any(String) });
    expect(both({ level: "warn" }, CALL).direct).toEqual([]);
  });

  it("writes through pino when the destination reads pino's metadata, as the dev mode's ring buffer does", () => {
    const out = capture();
    const { logger, ringBuffer } = createLogger({ dev: true, destination: out });
    new EventLog(logger).write("info", { ...CALL }, "rpc.complete");
    expect(ringBuffer!.size).toBe(1);
    expect(out.lines).toHaveLength(1);
  });
});
