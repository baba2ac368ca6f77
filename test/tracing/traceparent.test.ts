// docs/guides/deployment.md "Tracing", without an OpenTelemetry SDK: an incoming traceparent is
// continued in ctx.trace (inline, isolated, streaming) and in the traceparent the proxy sends
// upstream, with a new span id and the same trace id; a malformed one starts a new trace; the
// call's log event carries the traceId when there is one.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { join } from "node:path";
import { trace } from "@opentelemetry/api";
import { startServer, type TestServer } from "../helpers/server.js";
import { openViewer, send, type Viewer } from "../helpers/http.js";
import { TestUpstream } from "../helpers/upstream.js";

const TRACE_APP = join(import.meta.dirname, "../fixtures/trace-app");
const TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736";
const PARENT_ID = "00f067aa0ba902b7";
const SAMPLED = `00-${TRACE_ID}-${PARENT_ID}-01`;
const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;
const MALFORMED = [
  `00-${TRACE_ID.toUpperCase()}-${PARENT_ID}-01`,
  `00-${"0".repeat(32)}-${PARENT_ID}-01`,
  `00-${TRACE_ID}-${"0".repeat(16)}-01`,
  `ff-${TRACE_ID}-${PARENT_ID}-01`,
  `00-${TRACE_ID}-${PARENT_ID}-01-extra`,
  `00-${TRACE_ID}-${PARENT_ID}`,
  "garbage",
];

describe("trace context without an SDK", () => {
  let upstream: TestUpstream;
  let app: TestServer;
  let viewer: Viewer;
  beforeAll(async () => {
    upstream = await new TestUpstream().start();
    app = await startServer({
      root: TRACE_APP,
      config: { server: { secure: { proxies: { up: { baseUrl: `${upstream.origin}/base`, headers: { "x-api-key": "proxy-secret-value-1234" } } } } } },
    });
    viewer = await openViewer(app.url);
  });
  afterAll(async () => {
    await app.close();
    await upstream.close();
  });

  const call = (method: string, headers: Record<string, string> = {}) =>
    send(app.url, `/__rpc/plugin/trace/${method}`, { method: "POST", viewer, headers: { "content-type": "application/json", ...headers }, body: "{}" });

  it("has no SDK registered in this file: the API's provider is its no-op", () => {
    expect(trace.getTracer("x").startSpan("y").isRecording()).toBe(false);
  });

  it("continues an incoming traceparent in ctx.trace, with a span id of the call's own", async () => {
    for (const method of ["show", "isolated"]) {
      const answer = await call(method, { traceparent: SAMPLED, tracestate: "congo=t61rcWkgMzE, rojo=00f067aa0ba902b7" });
      const got = answer.json.result.trace;
      expect([method, got]).toEqual([
        method,
        {
          traceId: TRACE_ID,
          spanId: expect.stringMatching(/^[0-9a-f]{16}$/),
          parentSpanId: PARENT_ID,
          sampled: true,
          traceparent: `00-${TRACE_ID}-${got.spanId}-01`,
          tracestate: "congo=t61rcWkgMzE,rojo=00f067aa0ba902b7",
        },
      ]);
      expect(got.spanId).not.toBe(PARENT_ID);
    }
    const unsampled = await call("show", { traceparent: `00-${TRACE_ID}-${PARENT_ID}-00` });
    expect(unsampled.json.result.trace).toMatchObject({ traceId: TRACE_ID, sampled: false, traceparent: expect.stringMatching(/-00$/) });
  });

  it("starts a new trace without a traceparent, and for every malformed one, dropping its tracestate", async () => {
    const seen = new Set<string>();
    for (const traceparent of [undefined, ...MALFORMED]) {
      const answer = await call("show", traceparent === undefined ? {} : { traceparent, tracestate: "congo=t61rcWkgMzE" });
      const got = answer.json.result.trace;
      expect([traceparent, got]).toEqual([
        traceparent,
        {
          traceId: expect.stringMatching(/^[0-9a-f]{32}$/),
          spanId: expect.stringMatching(/^[0-9a-f]{16}$/),
          sampled: false,
          traceparent: `00-${got.traceId}-${got.spanId}-00`,
        },
      ]);
      expect(got.traceId).not.toBe(TRACE_ID);
      seen.add(got.traceId);
    }
    expect(seen.size).toBe(MALFORMED.length + 1);
  });

  it("gives a streaming method its trace too", async () => {
    const answer = await call("stream", { traceparent: SAMPLED, "x-app-rpc-stream": "1" });
    const last = JSON.parse(answer.body.trim().split("\n").at(-1)!);
    expect(last).toMatchObject({ done: true, ok: true, result: { traceId: TRACE_ID, parentSpanId: PARENT_ID } });
  });

  it("puts the traceId on the call's log event when the call has a trace, and none when nobody traced it", async () => {
    const traced = await call("quiet", { traceparent: SAMPLED });
    expect(app.logs.forRequest(traced.headers["x-request-id"] as string)).toEqual([expect.objectContaining({ event: "rpc.complete", traceId: TRACE_ID })]);
    const untraced = await call("quiet");
    const [event] = app.logs.forRequest(untraced.headers["x-request-id"] as string);
    expect(event).toMatchObject({ event: "rpc.complete" });
    expect(event).not.toHaveProperty("traceId");
    // A method that reads ctx.trace made the trace: its event names it.
    const made = await call("show");
    expect(app.logs.forRequest(made.headers["x-request-id"] as string)).toEqual([
      expect.objectContaining({ event: "rpc.complete", traceId: made.json.result.trace.traceId }),
    ]);
    const refused = await send(app.url, "/__rpc/plugin/trace/nope", { method: "POST", viewer, headers: { "content-type": "application/json", traceparent: SAMPLED }, body: "{}" });
    expect(app.logs.forRequest(refused.headers["x-request-id"] as string)).toEqual([expect.objectContaining({ event: "rpc.rejected", traceId: TRACE_ID })]);
  });

  it("sends upstream a child traceparent of the same trace with a new span id, and the tracestate", async () => {
    const answer = await send(app.url, "/proxy/up/echo", { viewer, headers: { traceparent: SAMPLED, tracestate: "congo=t61rcWkgMzE" } });
    const sent = answer.json.headers;
    const [, traceId, spanId, flags] = TRACEPARENT.exec(sent.traceparent)!;
    expect([traceId, flags, sent.tracestate]).toEqual([TRACE_ID, "01", "congo=t61rcWkgMzE"]);
    expect(spanId).not.toBe(PARENT_ID);
    expect(app.logs.forRequest(answer.headers["x-request-id"] as string)).toEqual([expect.objectContaining({ event: "proxy.complete", traceId: TRACE_ID })]);
  });

  it("sends upstream a new trace for a request without a traceparent or with a malformed one, never the client's header", async () => {
    for (const traceparent of [undefined, ...MALFORMED]) {
      const answer = await send(app.url, "/proxy/up/echo", { viewer, headers: traceparent === undefined ? {} : { traceparent, tracestate: "congo=t61rcWkgMzE" } });
      const sent = answer.json.headers;
      const [, traceId, , flags] = TRACEPARENT.exec(sent.traceparent) ?? [];
      expect([traceparent, typeof traceId, flags, sent.tracestate]).toEqual([traceparent, "string", "00", undefined]);
      expect(traceId).not.toBe(TRACE_ID);
    }
  });
});

describe("trace context with server.traceContext.trustIncoming false", () => {
  let upstream: TestUpstream;
  let app: TestServer;
  beforeAll(async () => {
    upstream = await new TestUpstream().start();
    app = await startServer({
      root: TRACE_APP,
      config: { server: { traceContext: { trustIncoming: false }, secure: { proxies: { up: { baseUrl: upstream.origin } } } } },
    });
  });
  afterAll(async () => {
    await app.close();
    await upstream.close();
  });

  it("starts a new trace for every request, in ctx.trace and upstream", async () => {
    const viewer = await openViewer(app.url);
    const headers = { "content-type": "application/json", traceparent: SAMPLED, tracestate: "congo=t61rcWkgMzE" };
    const answer = await send(app.url, "/__rpc/plugin/trace/show", { method: "POST", viewer, headers, body: "{}" });
    expect(answer.json.result.trace).toMatchObject({ traceId: expect.not.stringMatching(TRACE_ID), sampled: false });
    expect(answer.json.result.trace).not.toHaveProperty("parentSpanId");
    const proxied = await send(app.url, "/proxy/up/x", { viewer, headers: { traceparent: SAMPLED, tracestate: "congo=t61rcWkgMzE" } });
    expect(proxied.json.headers.traceparent).toMatch(TRACEPARENT);
    expect(proxied.json.headers.traceparent).not.toContain(TRACE_ID);
    expect(proxied.json.headers).not.toHaveProperty("tracestate");
  });
});
