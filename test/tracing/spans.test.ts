// docs/guides/deployment.md "Tracing", with an OpenTelemetry SDK registered as an operator would
// (here the SDK's in-memory exporter): RPC calls and proxied requests become spans that
// continue the caller's trace, the proxy's upstream receives the proxy span as its parent,
// a method's own spans are the call's children, and no span carries a secret. Before the SDK
// is registered nothing is recorded and ctx.trace works all the same.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { join } from "node:path";
import { ROOT_CONTEXT, SpanKind, SpanStatusCode, context, trace } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from "@opentelemetry/sdk-trace-base";
import { RequestTrace } from "../../dist/tracing/request-trace.js";
import { startServer, type TestServer } from "../helpers/server.js";
import { closedPort, openViewer, send, type RawAnswer, type Viewer } from "../helpers/http.js";
import { TestUpstream } from "../helpers/upstream.js";

const TRACE_APP = join(import.meta.dirname, "../fixtures/trace-app");
const TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736";
const PARENT_ID = "00f067aa0ba902b7";
const SAMPLED = `00-${TRACE_ID}-${PARENT_ID}-01`;
const STATIC_SECRET = "proxy-static-secret-4711";
const QUERY_SECRET = "query-key-secret-0815";

const exporter = new InMemorySpanExporter();
const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });

function register(): void {
  trace.setGlobalTracerProvider(provider);
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
}

const spans = (): ReadableSpan[] => exporter.getFinishedSpans();
const named = (name: string): ReadableSpan[] => spans().filter((span) => span.name === name);

describe("spans", () => {
  let upstream: TestUpstream;
  let app: TestServer;
  let viewer: Viewer;
  beforeAll(async () => {
    upstream = await new TestUpstream().start();
    const down = await closedPort();
    app = await startServer({
      root: TRACE_APP,
      config: {
        server: {
          secure: {
            proxies: {
              up: { baseUrl: `${upstream.origin}/base`, headers: { "x-api-key": STATIC_SECRET } },
              down: { baseUrl: `http://127.0.0.1:${down}` },
            },
          },
        },
      },
    });
    viewer = await openViewer(app.url);
  });
  afterAll(async () => {
    trace.disable();
    context.disable();
    await provider.shutdown();
    await app.close();
    await upstream.close();
    delete (globalThis as { __startChildSpan?: unknown }).__startChildSpan;
  });
  beforeEach(() => exporter.reset());

  const call = (method: string, headers: Record<string, string> = {}): Promise<RawAnswer> =>
    send(app.url, `/__rpc/plugin/trace/${method}`, { method: "POST", viewer, headers: { "content-type": "application/json", ...headers }, body: "{}" });

  describe("before the SDK is registered", () => {
    it("records nothing, and ctx.trace and the proxy's traceparent still continue the trace", async () => {
      const answer = await call("show", { traceparent: SAMPLED });
      expect(answer.json.result.trace).toMatchObject({ traceId: TRACE_ID, parentSpanId: PARENT_ID, sampled: true });
      const proxied = await send(app.url, "/proxy/up/echo", { viewer, headers: { traceparent: SAMPLED } });
      expect(proxied.json.headers.traceparent).toMatch(new RegExp(`^00-${TRACE_ID}-[0-9a-f]{16}-01$`));
      expect(spans()).toEqual([]);
    });
  });

  describe("with the SDK registered", () => {
    beforeAll(register);

    it("makes an RPC call a server span that continues the caller's trace, and ctx.trace is that span", async () => {
      const answer = await call("show", { traceparent: SAMPLED, tracestate: "congo=t61rcWkgMzE" });
      const [span] = named("rpc plugin/trace/show");
      expect(span).toBeDefined();
      const { traceId, spanId } = span!.spanContext();
      expect([traceId, span!.parentSpanContext?.spanId, span!.parentSpanContext?.isRemote, span!.kind]).toEqual([TRACE_ID, PARENT_ID, true, SpanKind.SERVER]);
      expect(span!.attributes).toEqual({
        "http.request.method": "POST",
        "http.response.status_code": 200,
        "rpc.system": "counterpart",
        "rpc.service": "plugin/trace",
        "rpc.method": "show",
        "counterpart.rpc.kind": "plugin",
        "counterpart.rpc.id": "trace",
        "counterpart.request_id": answer.headers["x-request-id"],
      });
      expect(span!.status.code).toBe(SpanStatusCode.UNSET);
      expect(answer.json.result.trace).toEqual({
        traceId: TRACE_ID,
        spanId,
        parentSpanId: PARENT_ID,
        sampled: true,
        traceparent: `00-${TRACE_ID}-${spanId}-01`,
        tracestate: "congo=t61rcWkgMzE",
      });
      expect(app.logs.forRequest(answer.headers["x-request-id"] as string)).toEqual([expect.objectContaining({ event: "rpc.complete", traceId: TRACE_ID })]);
    });

    it("leaves the decision to the SDK's sampler: a parent that is not sampled records no span", async () => {
      const answer = await call("show", { traceparent: `00-${TRACE_ID}-${PARENT_ID}-00` });
      const got = answer.json.result.trace;
      expect(got).toMatchObject({ traceId: TRACE_ID, parentSpanId: PARENT_ID, sampled: false, traceparent: `00-${TRACE_ID}-${got.spanId}-00` });
      expect(got.spanId).not.toBe(PARENT_ID);
      // The method's own spans follow the call's decision instead of starting traces of their own.
      (globalThis as { __startChildSpan?: unknown }).__startChildSpan = () => {
        const span = trace.getTracer("method").startSpan("method's own");
        span.end();
        return span.spanContext().traceId;
      };
      const child = await call("child", { traceparent: `00-${TRACE_ID}-${PARENT_ID}-00` });
      expect(child.json.result.child).toBe(TRACE_ID);
      expect(spans()).toEqual([]);
    });

    it("starts a new trace for a missing or malformed traceparent", async () => {
      for (const traceparent of [undefined, `00-${TRACE_ID.toUpperCase()}-${PARENT_ID}-01`, `00-${TRACE_ID}-${"0".repeat(16)}-01`, `ff-${TRACE_ID}-${PARENT_ID}-01`]) {
        exporter.reset();
        const answer = await call("show", traceparent === undefined ? {} : { traceparent });
        const [span] = named("rpc plugin/trace/show");
        expect([traceparent, span?.parentSpanContext]).toEqual([traceparent, undefined]);
        expect(span!.spanContext().traceId).not.toBe(TRACE_ID);
        expect(answer.json.result.trace).toMatchObject({ traceId: span!.spanContext().traceId, spanId: span!.spanContext().spanId, sampled: true });
      }
    });

    it("marks a call answered 5xx as an error with its code, and a refused one with its code only", async () => {
      await call("fail", { traceparent: SAMPLED });
      const [failed] = named("rpc plugin/trace/fail");
      expect([failed?.status, failed?.attributes["http.response.status_code"], failed?.attributes["error.type"]]).toEqual([
        { code: SpanStatusCode.ERROR, message: "RPC_INTERNAL_ERROR" },
        500,
        "RPC_INTERNAL_ERROR",
      ]);
      // The method's error message is the log's business, never the span's.
      expect(JSON.stringify({ name: failed!.name, attributes: failed!.attributes, events: failed!.events, status: failed!.status })).not.toContain("the method failed");

      exporter.reset();
      await call("made-up-name", { traceparent: SAMPLED });
      // A name the caller made up is an attribute, never the span's name.
      const [refused] = spans();
      expect([refused?.name, refused?.status.code, refused?.attributes["error.type"], refused?.attributes["rpc.method"]]).toEqual([
        "rpc",
        SpanStatusCode.UNSET,
        "RPC_UNKNOWN_METHOD",
        "made-up-name",
      ]);
    });

    it("gives isolated and streaming methods the call's span as ctx.trace", async () => {
      const isolated = await call("isolated", { traceparent: SAMPLED });
      const [span] = named("rpc plugin/trace/isolated");
      expect(isolated.json.result.trace).toMatchObject({ traceId: TRACE_ID, spanId: span!.spanContext().spanId, parentSpanId: PARENT_ID });

      const stream = await call("stream", { traceparent: SAMPLED, "x-app-rpc-stream": "1" });
      const [streamed] = named("rpc plugin/trace/stream");
      const last = JSON.parse(stream.body.trim().split("\n").at(-1)!);
      expect(last.result).toMatchObject({ traceId: TRACE_ID, spanId: streamed!.spanContext().spanId });
      expect(streamed!.attributes["http.response.status_code"]).toBe(200);
    });

    it("runs an inline method under its call's span: the method's own spans are its children", async () => {
      (globalThis as { __startChildSpan?: unknown }).__startChildSpan = () => {
        const span = trace.getTracer("method").startSpan("method's own");
        span.end();
        return span.spanContext().spanId;
      };
      const answer = await call("child", { traceparent: SAMPLED });
      const [own] = named("method's own");
      const [rpc] = named("rpc plugin/trace/child");
      expect(answer.json.result.child).toBe(own!.spanContext().spanId);
      expect([own!.spanContext().traceId, own!.parentSpanContext?.spanId]).toEqual([TRACE_ID, rpc!.spanContext().spanId]);
    });

    it("makes a proxied request a span that is the parent of the upstream's request, with nothing secret in it", async () => {
      const answer = await send(app.url, `/proxy/up/echo/path-part?key=${QUERY_SECRET}`, {
        viewer,
        headers: { traceparent: SAMPLED, tracestate: "congo=t61rcWkgMzE", authorization: "Bearer client-token-secret-42" },
      });
      expect(answer.status).toBe(200);
      const [span] = named("proxy up");
      const { traceId, spanId } = span!.spanContext();
      expect([traceId, span!.parentSpanContext?.spanId, span!.kind]).toEqual([TRACE_ID, PARENT_ID, SpanKind.CLIENT]);
      const seen = answer.json.headers;
      expect([seen.traceparent, seen.tracestate]).toEqual([`00-${TRACE_ID}-${spanId}-01`, "congo=t61rcWkgMzE"]);
      expect(span!.attributes).toEqual({
        "http.request.method": "GET",
        "http.response.status_code": 200,
        "counterpart.proxy.alias": "up",
        "counterpart.request_id": answer.headers["x-request-id"],
        "server.address": "127.0.0.1",
        "server.port": upstream.port,
      });
      const text = JSON.stringify({ name: span!.name, attributes: span!.attributes, events: span!.events, status: span!.status, links: span!.links });
      for (const secret of [STATIC_SECRET, QUERY_SECRET, "client-token-secret-42", "path-part", viewer.csrf, viewer.cookie.split("=")[1]!]) {
        expect([secret, text.includes(secret)]).toEqual([secret, false]);
      }
    });

    it("marks a proxied request that failed upstream as an error, and names a refused one by no alias", async () => {
      await send(app.url, "/proxy/down/x", { viewer, headers: { traceparent: SAMPLED } });
      const [down] = named("proxy down");
      expect([down?.status.code, down?.attributes["http.response.status_code"], down?.attributes["error.type"]]).toEqual([
        SpanStatusCode.ERROR,
        502,
        "PROXY_UPSTREAM_ERROR",
      ]);
      exporter.reset();
      await send(app.url, "/proxy/made-up-alias/x", { viewer, headers: { traceparent: SAMPLED } });
      const [refused] = spans();
      expect([refused?.name, refused?.attributes["error.type"], refused?.status.code]).toEqual(["proxy", "PROXY_UNKNOWN_ALIAS", SpanStatusCode.UNSET]);
    });

    it("takes a span already active (the operator's own HTTP instrumentation) as the parent, over the traceparent", () => {
      const outer = trace.getTracer("operator").startSpan("operator's server span");
      const started = context.with(trace.setSpan(ROOT_CONTEXT, outer), () => RequestTrace.start({ traceparent: SAMPLED }, true, "inner", "server"));
      started.end(200, undefined);
      outer.end();
      const [inner] = named("inner");
      expect([inner!.spanContext().traceId, inner!.parentSpanContext?.spanId]).toEqual([outer.spanContext().traceId, outer.spanContext().spanId]);
      expect(started.context).toMatchObject({ traceId: outer.spanContext().traceId, spanId: inner!.spanContext().spanId, parentSpanId: outer.spanContext().spanId });
    });
  });
});
