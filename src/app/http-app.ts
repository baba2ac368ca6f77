/**
 * The Fastify instance and the answers Fastify itself gives (bad URLs, unrouted paths,
 * errors outside a route's own handling, requests during shutdown), all in the one error
 * shape `{ error, code, details }`.
 */
import type { ServerResponse } from "node:http";
import { createRequire } from "node:module";
import Fastify, { LogController, type FastifyError, type FastifyInstance, type FastifyReply, type FastifyServerOptions } from "fastify";
import type { ResolvedConfig } from "../config/resolve.js";
import { ERROR_CODES, type ErrorCode } from "../errors/codes.js";
import { errorOf } from "../errors/http-error.js";
import type { Logger } from "../log/logger.js";
import { sendError as sendHttpError } from "../http/send-error.js";
import { requestIdFor } from "../tracing/request-id.js";
import { fixedAnswerHeaders } from "../http/security-headers.js";
import { isStamping, stampingResponseClass } from "../http/answer-headers.js";

/**
 * A draining process's 503 never ran anything (docs/guides/deployment.md "Graceful shutdown"): it
 * says so, so that a balancer may send the request, a POST included, to another host (nginx
 * keys on the 503 itself, `proxy_next_upstream http_503 non_idempotent`; others, such as
 * Envoy's retriable headers, on this header), and a client that sees it may come back soon.
 */
const DRAINING_HEADERS = { "x-app-unprocessed": "1", "retry-after": "1" };

export interface HttpApp {
  app: FastifyInstance;
  /**
   * From now on every new request is answered 503 SERVICE_UNAVAILABLE, but for the routes
   * whose config says `answersWhileClosing` (the probes, src/health/route.ts).
   */
  startClosing(): void;
}

export function createHttpApp(log: Logger, config: ResolvedConfig): HttpApp {
  let closing = false;
  const trustRequestId = config.requestId.trustIncoming;
  const fixed = fixedAnswerHeaders(config.headers);
  // The server's responses add these headers to whatever head they write
  // (src/http/answer-headers.ts); an injected request's response (the testing kit's) is
  // light-my-request's own, so it gets them set here.
  const stampAnswer = (raw: ServerResponse, requestId: string) => {
    if (isStamping(raw)) {
      raw.requestId = requestId;
      return;
    }
    raw.setHeader("x-request-id", requestId);
    for (const [name, value] of fixed) raw.setHeader(name, value);
  };
  const app = Fastify({
    http: { ServerResponse: stampingResponseClass(fixed) },
    loggerInstance: log,
    // Each RPC call logs its own single event; Fastify's per-request lines would double it.
    logController: new LogController({ disableRequestLogging: true }),
    genReqId: (req) => requestIdFor(req.headers["x-request-id"], trustRequestId),
    // No child logger per request: every RPC call and proxied request logs its own event
    // with its request id, and a method's ctx.log is made only when the method uses it.
    childLoggerFactory: (logger) => logger,
    trustProxy: config.trustProxy,
    // Our own hook answers during shutdown, in our error shape.
    return503OnClosing: false,
    forceCloseConnections: "idle",
    // A URL Fastify cannot decode never reaches a route: answer it like any bad request.
    frameworkErrors: (_error, request, reply) => {
      // No hook runs for these: the headers every answer carries are set here.
      stampAnswer(reply.raw, request.id);
      sendError(reply, "BAD_REQUEST");
    },
    schemaController: { compilersFactory: LAZY_SCHEMA_COMPILERS },
  }) as unknown as FastifyInstance;

  app.addHook("onRequest", (request, reply, done) => {
    // First, so that every answer carries them, a shutdown's 503 too.
    stampAnswer(reply.raw, request.id);
    if (!closing) return done();
    // Every answer ends its connection, so that no keep-alive socket holds the drain open.
    reply.header("connection", "close");
    if ((request.routeOptions.config as { answersWhileClosing?: boolean } | undefined)?.answersWhileClosing === true) return done();
    sendError(reply, "SERVICE_UNAVAILABLE", DRAINING_HEADERS);
  });
  app.setErrorHandler((error: FastifyError, request, reply) => {
    const code = codeForStatus(error.statusCode);
    // Decided on the answer, not the error's own status: whatever answers 500 is logged.
    if (ERROR_CODES[code].status >= 500) reply.log.error({ reqId: request.id, err: error }, "request failed");
    sendError(reply, code, code === "RANGE_NOT_SATISFIABLE" ? contentRangeOf(error) : undefined);
  });
  app.setNotFoundHandler((_request, reply) => {
    sendError(reply, "NOT_FOUND");
  });
  return {
    app,
    startClosing() {
      closing = true;
    },
  };
}

/**
 * Fastify's own schema compilers (ajv, fast-json-stringify), loaded only when a route
 * declares a schema. Ours declare none, and building the defaults up front loads ajv and
 * its formats, fast-json-stringify and fast-uri: about 550 KB of source, some 3 MB resident.
 */
const fastifyRequire = createRequire(createRequire(import.meta.url).resolve("fastify"));
type CompilerFactory = (...args: unknown[]) => unknown;
let defaultValidator: CompilerFactory | undefined;
let defaultSerializer: CompilerFactory | undefined;
type CompilersFactory = NonNullable<NonNullable<FastifyServerOptions["schemaController"]>["compilersFactory"]>;
const LAZY_SCHEMA_COMPILERS = {
  buildValidator: (...args: unknown[]) => {
    defaultValidator ??= (fastifyRequire("@fastify/ajv-compiler") as () => CompilerFactory)();
    return defaultValidator(...args);
  },
  buildSerializer: (...args: unknown[]) => {
    defaultSerializer ??= (fastifyRequire("@fastify/fast-json-stringify-compiler") as () => CompilerFactory)();
    return defaultSerializer(...args);
  },
} as CompilersFactory;

const BY_STATUS: Record<number, ErrorCode> = {
  400: "BAD_REQUEST",
  404: "NOT_FOUND",
  // @fastify/send's answers to a failed If-Match or If-Unmodified-Since and to a Range
  // outside the file.
  412: "PRECONDITION_FAILED",
  413: "PAYLOAD_TOO_LARGE",
  415: "UNSUPPORTED_MEDIA_TYPE",
  416: "RANGE_NOT_SATISFIABLE",
  503: "SERVICE_UNAVAILABLE",
};

/**
 * The declared code for the status a library gave its error. Another 4xx is still the
 * client's doing: a 400, never a 500 that would page someone; anything else is ours.
 */
function codeForStatus(status: number | undefined): ErrorCode {
  if (status === undefined || !Number.isInteger(status)) return "INTERNAL_ERROR";
  return BY_STATUS[status] ?? (status >= 400 && status < 500 ? "BAD_REQUEST" : "INTERNAL_ERROR");
}

/** A 416 says how long the file is (RFC 9110 section 15.5.17), as @fastify/send worked out. */
function contentRangeOf(error: FastifyError): Record<string, string> | undefined {
  const headers = (error as { headers?: unknown }).headers;
  if (typeof headers !== "object" || headers === null) return undefined;
  for (const [name, value] of Object.entries(headers)) {
    if (name.toLowerCase() === "content-range" && typeof value === "string") return { "content-range": value };
  }
  return undefined;
}

function sendError(reply: FastifyReply, code: ErrorCode, headers?: Record<string, string>): void {
  // Fastify's own 413 and 415, a bad URL, a 404 or a shutdown answer may leave a body
  // unread: the one sender closes or drains as for every other error.
  sendHttpError(reply, errorOf(code), headers ? { headers } : {});
}
