/**
 * The trace of one RPC call or proxied request (docs/guides/deployment.md "Tracing"): the caller's
 * `traceparent` continued (a malformed one starts a new trace), the ids a method sees as
 * `ctx.trace`, the `traceparent` sent on to the next hop, and, when the operator registered
 * an OpenTelemetry SDK, the request's span. Without an SDK no span object is made at all:
 * the cost is reading two headers, and making two ids only for a caller that asks for them.
 */
import type { IncomingHttpHeaders } from "node:http";
import type { Attributes, Context, Span, Tracer, TracerProvider } from "@opentelemetry/api";
import { otelApiIfRegistered, type OtelApi } from "./otel-api.js";
import { parseTraceparent, parseTracestate, randomSpanId, randomTraceId, traceContextOf, type TraceContext, type TraceParent } from "./trace-context.js";

const TRACER_NAME = "@counterpart-viewer/server";

// The API answers with its own no-op provider until an SDK registers one; a fresh proxy
// hands out that same no-op object, so one comparison tells whether anyone registered.
let noopProvider: TracerProvider | null = null;
let cachedProvider: TracerProvider | null = null;
let cachedTracer: Tracer | null = null;

/** The API, once a span exists: only then was it loaded (./otel-api.ts). */
function api(): OtelApi {
  const loaded = otelApiIfRegistered();
  if (loaded === null) throw new Error("a span exists, but no OpenTelemetry API was loaded");
  return loaded;
}

/**
 * The registered SDK's tracer, or null. Asked on every request (a global read and a
 * comparison), so that an SDK registered after the server started is used from then on.
 */
export function registeredTracer(): Tracer | null {
  const otel = otelApiIfRegistered();
  if (otel === null) return null;
  const { trace } = otel;
  noopProvider ??= new otel.ProxyTracerProvider().getDelegate();
  const global = trace.getTracerProvider();
  // Duck-typed: another copy of the API (the operator's) registers its own proxy class.
  const proxy = global as TracerProvider & { getDelegate?: () => TracerProvider };
  const delegate = typeof proxy.getDelegate === "function" ? proxy.getDelegate() : global;
  if (delegate === noopProvider) return null;
  if (delegate !== cachedProvider) {
    cachedProvider = delegate;
    cachedTracer = delegate.getTracer(TRACER_NAME);
  }
  return cachedTracer;
}

export type RequestSpanKind = "server" | "client";

export class RequestTrace {
  readonly #parent: TraceParent | null;
  readonly #tracestate: string | undefined;
  readonly #span: Span | null;
  /** The OpenTelemetry context holding the span: what an inline method runs under. */
  readonly #spanContext: Context | null;
  readonly #parentSpanId: string | undefined;
  #ended = false;
  #context: TraceContext | undefined = undefined;

  /**
   * `trustIncoming` false (`server.traceContext.trustIncoming`): the caller's headers are
   * ignored and every request starts its own trace.
   */
  static start(headers: IncomingHttpHeaders, trustIncoming: boolean, name: string, kind: RequestSpanKind): RequestTrace {
    const parent = trustIncoming ? parseTraceparent(headers.traceparent) : null;
    // The spec: a tracestate whose traceparent was not accepted is never read.
    const tracestate = parent ? parseTracestate(headers.tracestate) : undefined;
    const tracer = registeredTracer();
    if (!tracer) return new RequestTrace(parent, tracestate, null, null, parent?.parentId);
    return RequestTrace.#withSpan(tracer, parent, tracestate, name, kind);
  }

  static #withSpan(tracer: Tracer, parent: TraceParent | null, tracestate: string | undefined, name: string, kind: RequestSpanKind): RequestTrace {
    const { context: otelContext, trace, createTraceState, isSpanContextValid, SpanKind } = api();
    // A span the operator's own instrumentation made active (an HTTP server span, say) is
    // the parent; else the caller's traceparent; else this request starts the trace.
    const active = otelContext.active();
    const activeParent = trace.getSpanContext(active);
    let base = active;
    if (!activeParent && parent) {
      base = trace.setSpanContext(active, {
        traceId: parent.traceId,
        spanId: parent.parentId,
        traceFlags: parent.flags,
        isRemote: true,
        traceState: tracestate === undefined ? undefined : createTraceState(tracestate),
      });
    }
    const parentSpanId = activeParent?.spanId ?? parent?.parentId;
    const span = tracer.startSpan(name, { kind: kind === "server" ? SpanKind.SERVER : SpanKind.CLIENT }, base);
    const spanContext = span.spanContext();
    // A provider that records nothing hands back its parent's context or an invalid one:
    // its ids are not this request's, so they are made here as without an SDK.
    if (!isSpanContextValid(spanContext) || (!span.isRecording() && spanContext.spanId === parentSpanId)) {
      span.end();
      return new RequestTrace(parent, tracestate, null, null, parent?.parentId);
    }
    return new RequestTrace(parent, tracestate, span, trace.setSpan(base, span), parentSpanId);
  }

  private constructor(parent: TraceParent | null, tracestate: string | undefined, span: Span | null, spanContext: Context | null, parentSpanId: string | undefined) {
    this.#parent = parent;
    this.#tracestate = tracestate;
    this.#span = span;
    this.#spanContext = spanContext;
    this.#parentSpanId = parentSpanId;
  }

  /** True when an SDK made a span for this request, recorded or sampled out. */
  get hasSpan(): boolean {
    return this.#span !== null;
  }

  /** True when an SDK records this request's span: attributes are worth building. */
  get recording(): boolean {
    return this.#span !== null && !this.#ended && this.#span.isRecording();
  }

  /** The trace id when one is known without making one: the caller's, the span's, or one already made. */
  get traceId(): string | undefined {
    return this.#context?.traceId ?? this.#span?.spanContext().traceId ?? this.#parent?.traceId;
  }

  /** `ctx.trace`, and the `traceparent` the proxy sends upstream: made on first use. */
  get context(): TraceContext {
    this.#context ??= this.#makeContext();
    return this.#context;
  }

  #makeContext(): TraceContext {
    let traceId: string;
    let spanId: string;
    let flags: number;
    let tracestate = this.#tracestate;
    if (this.#span) {
      const spanContext = this.#span.spanContext();
      ({ traceId, spanId } = spanContext);
      // The sampler's decision, which may differ from the caller's.
      flags = spanContext.traceFlags;
      tracestate = spanContext.traceState?.serialize() || tracestate;
    } else {
      traceId = this.#parent?.traceId ?? randomTraceId();
      spanId = randomSpanId();
      // Not recording: the caller's flags go on unchanged, as the spec asks.
      flags = this.#parent?.flags ?? 0;
    }
    return traceContextOf(traceId, spanId, flags, this.#parentSpanId, tracestate);
  }

  rename(name: string): void {
    if (this.recording) this.#span!.updateName(name);
  }

  setAttributes(attributes: Attributes): void {
    if (this.recording) this.#span!.setAttributes(attributes);
  }

  /** Runs `fn` with this request's span active, so that spans the method's own code makes are its children. */
  run<T>(fn: () => T): T {
    return this.#spanContext && !this.#ended ? api().context.with(this.#spanContext, fn) : fn();
  }

  /**
   * Ends the span once, with the answer's status; a 5xx is an error, with the error code
   * as its type (OpenTelemetry's HTTP server rule). Never a message, header or URL: they
   * may carry secrets.
   */
  end(status: number, code: string | undefined): void {
    const span = this.#span;
    if (!span || this.#ended) return;
    this.#ended = true;
    if (span.isRecording()) {
      span.setAttribute("http.response.status_code", status);
      if (code !== undefined) span.setAttribute("error.type", code);
      if (status >= 500) span.setStatus({ code: api().SpanStatusCode.ERROR, message: code });
    }
    span.end();
  }
}
