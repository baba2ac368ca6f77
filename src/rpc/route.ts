/**
 * The RPC gateway: `POST /__rpc/{module|plugin}/<id>/<method>`. One visible path per call,
 * each step its own module, the first failing step answers (docs/reference/error-codes.md):
 *   route → target → session, CSRF, origin → rate limits (the session's data loading
 *     from here) → bounded body (JSON, or multipart with files: its `args` part verified
 *     before a file byte is read) → verifiers → `user` rate limits → stream mode → input
 *     (only for a policy that declares one)
 *     → runtime (breaker → queue → executor, inline or isolated, buffered or streaming
 *        → session data saved) → answer (JSON, or a stream's terminal record) + one log event.
 */
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { errorOf, HttpError } from "../errors/http-error.js";
import { contextHasVerifiers, resolveVerifierContext, runRpcVerifiers } from "../auth/rpc-contexts.js";
import { CallLifetime, ClientGoneError } from "../runtime/call-lifetime.js";
import type { RpcRuntime } from "../runtime/runtime.js";
import { userSubOf } from "../runtime/rate-limit.js";
import type { SessionCheck } from "../auth/session-cache.js";
import type { VerifierRegistry } from "../auth/verifier-registry.js";
import type { RpcVerifier } from "../auth/verifier-types.js";
import type { ResolvedConfig } from "../config/resolve.js";
import type { CoreFacade } from "../core/facade.js";
import type { MethodEntry, Registry, Target } from "../discovery/registry.js";
import type { DevReload } from "../discovery/dev-reload.js";
import type { EventListeners } from "../log/events.js";
import type { Logger } from "../log/logger.js";
import { EventLog } from "../log/event-line.js";
import type { SecretMask } from "../log/mask-secrets.js";
import { checkAccess } from "./access.js";
import { answerError, answerResult, RPC_EVENT_FIELDS, type AnswerOptions } from "./answer.js";
import { readCallBody } from "./multipart-body.js";
import type { RpcBody } from "./body.js";
import { CallFiles } from "../runtime/call-files.js";
import { FileResult } from "../plugin-api/file-result.js";
import { answerFile } from "./file-answer.js";
import { startCall, type RpcCall } from "../runtime/call.js";
import { checkStreamMode, resolveInDevMode, resolveMethod, resolveTargetItem } from "./target.js";
import { NdjsonStream } from "./ndjson-stream.js";
import { validateInput } from "./validate-input.js";
import { nameRpcSpan, startRpcTrace } from "./call-trace.js";
import { CallSession } from "../state/call-session.js";
import type { SessionStore } from "../state/session-store.js";

interface RpcParams {
  kind: string;
  id: string;
  method: string;
}

/** What the gateway needs from the server it is part of. */
export interface RpcRouteOptions {
  dev: boolean;
  log: Logger;
  maskSecrets: SecretMask | null;
  events: EventListeners;
  config: Pick<ResolvedConfig, "allowedOrigins" | "trustProxy" | "rpc" | "rpcVerifiers" | "session" | "traceContext">;
  registry: Registry;
  /** Dev mode only: edited, new server files and new items are picked up before a call. */
  devReload: DevReload | undefined;
  sessionChecks: SessionCheck;
  rpcVerifiers: VerifierRegistry<RpcVerifier>;
  /**
   * What a verifier gets as `core`: the server's own, not the called item's, so that a
   * verifier registered by one plugin never reads another's secure config.
   */
  facade: CoreFacade;
  runtime: RpcRuntime;
  /** Where `ctx.session`'s data lives (docs/guides/sessions-and-state.md "Session data"). */
  sessionStore: SessionStore;
}

export async function rpcRoutes(app: FastifyInstance, options: RpcRouteOptions): Promise<void> {
  const { runtime } = options;
  const answer: AnswerOptions = { dev: options.dev, log: new EventLog(options.log, RPC_EVENT_FIELDS), maskSecrets: options.maskSecrets, listeners: options.events.rpc };
  const originPolicy = { allowedOrigins: options.config.allowedOrigins, trustProxy: options.config.trustProxy };
  const trustTraceContext = options.config.traceContext.trustIncoming;

  // Errors Fastify raises before the handler (a malformed Content-Type, say) are answered
  // in the RPC shape and logged as the call's one event.
  app.setErrorHandler((error: FastifyError, request, reply) => {
    const params = (request.params ?? {}) as Partial<RpcParams>;
    const call = startCall(request.id, { kind: params.kind ?? "", id: params.id ?? "", method: params.method ?? "" }, startRpcTrace(request, trustTraceContext));
    const status = error.statusCode ?? 500;
    const answered =
      request.method !== "POST"
        ? errorOf("RPC_METHOD_NOT_ALLOWED")
        : status >= 400 && status < 500
          ? errorOf("RPC_BAD_REQUEST", { reason: "http" })
          : error;
    answerError(reply, call, answered, answer);
    return reply;
  });

  // The body is read by the gateway itself, after the session checks and against the
  // method's own `maxBodyBytes`, so Fastify must leave the stream alone. The parser is
  // named for JSON as well as "*": Fastify caches a named type's lookup, while the "*"
  // fallback costs a Content-Type parse on every call.
  const leaveBodyAlone = (_request: FastifyRequest, _payload: unknown, done: (error: null, body: undefined) => void) => done(null, undefined);
  app.removeAllContentTypeParsers();
  app.addContentTypeParser("application/json", leaveBodyAlone);
  app.addContentTypeParser("*", leaveBodyAlone);

  async function handle(request: FastifyRequest<{ Params: RpcParams }>, reply: FastifyReply) {
    const call = startCall(request.id, request.params, startRpcTrace(request, trustTraceContext));
    // Ended here when the client goes away, and by its own timer when the call's timeout
    // passes; `ctx.signal` follows it.
    const lifetime = new CallLifetime();
    // Its uploads and temporary folder: no disk is touched until a call needs it.
    const files = new CallFiles();
    let stream: NdjsonStream | null = null;
    const res = reply.raw;
    res.on("close", () => {
      if (!res.writableFinished) lifetime.end(new ClientGoneError());
    });
    try {
      if (request.method !== "POST") throw errorOf("RPC_METHOD_NOT_ALLOWED");
      // The checks before the body return their refusal rather than throw it (a throw,
      // unwound through Fastify's handler, was the largest single cost of a refused call in
      // a CPU profile: docs/reference/benchmarks.md "Refusals").
      let target: Target;
      let entry: MethodEntry;
      if (options.devReload) {
        const found = await resolveInDevMode(options.devReload, options.registry, call.kind, call.id, call.method);
        if (found instanceof HttpError) return answerFailure(reply, call, lifetime, files, found, answer, stream);
        ({ target, entry } = found);
      } else {
        const item = resolveTargetItem(options.registry, call.kind, call.id);
        if (item instanceof HttpError) return answerFailure(reply, call, lifetime, files, item, answer, stream);
        const named = resolveMethod(item, call.method);
        if (named instanceof HttpError) return answerFailure(reply, call, lifetime, files, named, answer, stream);
        target = item;
        entry = named;
      }
      nameRpcSpan(call, entry);
      // One timer per call: a `timeoutMs` for the checks, the body and the verifiers, and
      // (started over by the runtime) one for the queue wait and the method. Armed before
      // the first wait, so that a call the synchronous checks refuse (401, 403, a 429
      // counted here) never arms one.
      const { timeoutMs } = entry.policy;
      // No await when the checks are synchronous (the common case): the body's listeners
      // are then in place before the parser hands the body over. An `auth.public`
      // function that never settles is bounded like a verifier.
      const checked = checkAccess(request, entry, options.sessionChecks, originPolicy);
      if (checked instanceof Promise) lifetime.armTimeout(timeoutMs);
      const access = checked instanceof Promise ? await lifetime.race(checked) : checked;
      if (access instanceof HttpError) return answerFailure(reply, call, lifetime, files, access, answer, stream);
      // Before the session's data or the body is touched, so that a refusal costs no more
      // than a refusal; a method without a `rateLimit` has no step here at all. Its step was
      // given to it when it was loaded; counted in this process, it answers at once.
      const limits = entry.rateLimitStep;
      if (limits === undefined && entry.policy.rateLimit) throw new Error(`${entry.key}: its rate limit step was never bound`);
      if (limits?.early) {
        const checking = limits.check(false, access.session?.id ?? null, request.ip, null);
        if (checking instanceof Promise) lifetime.armTimeout(timeoutMs);
        const refused = checking instanceof Promise ? await checking : checking;
        if (refused) return answerFailure(reply, call, lifetime, files, refused, answer, stream);
      }
      lifetime.armTimeout(timeoutMs);
      // The session's data is loaded while the body arrives; awaited before the method runs.
      // A method whose code cannot read `ctx.session` has none loaded: the store is not asked.
      const opening = access.session
        ? entry.usesSession
          ? CallSession.open(options.sessionStore, access.session, options.config.session.maxDataBytes)
          : CallSession.withoutData(options.sessionStore, access.session)
        : null;
      if (opening instanceof Promise) opening.catch(() => {});
      const verify = (body: RpcBody): Promise<unknown> | null => {
        const resolved = resolveVerifierContext(options.config.rpcVerifiers, body.contextId);
        call.contextId = resolved.name;
        // Most calls are session-only with no verifier context: no verifier step to run.
        const needsVerifiers = !access.isPublic && (!entry.policy.requireSession || contextHasVerifiers(resolved.context));
        return needsVerifiers
          ? lifetime.race(
              runRpcVerifiers(
                {
                  reqId: call.requestId,
                  req: request.raw,
                  res,
                  contextId: body.contextId,
                  kind: entry.kind,
                  id: entry.id,
                  method: entry.name,
                  resolved,
                  requireSession: entry.policy.requireSession,
                },
                options.rpcVerifiers,
                options.facade,
                options.log,
              ),
            )
          : null;
      };
      // A multipart call is verified once its `args` part is in, before a byte of its files is read.
      let verifying: Promise<unknown> | null | undefined;
      const body = await readCallBody(request.raw, entry.policy, lifetime, files, (args) => (verifying = verify(args)));
      if (verifying === undefined) verifying = verify(body);
      const user = verifying === null ? null : await verifying;
      if (limits?.late) {
        const checking = limits.check(true, access.session?.id ?? null, request.ip, userSubOf(user));
        const refused = checking instanceof Promise ? await checking : checking;
        if (refused) return answerFailure(reply, call, lifetime, files, refused, answer, stream);
      }
      checkStreamMode(entry, request.headers["x-app-rpc-stream"]);
      let args = body.args;
      if (entry.policy.input) {
        const checked = validateInput(entry.policy.input, args, lifetime);
        const validated = checked instanceof Promise ? await checked : checked;
        // Returned, not thrown, for the reason the checks before the body give.
        if (validated instanceof HttpError) return answerFailure(reply, call, lifetime, files, validated, answer, stream);
        args = validated;
      }
      const session = opening instanceof Promise ? await lifetime.race(opening) : opening;
      if (entry.policy.streaming) stream = new NdjsonStream(reply, lifetime, options.config.rpc.streamHeartbeatMs);
      const result = await runtime.run({
        entry,
        call,
        args,
        session,
        user,
        viewerId: body.viewerId,
        contextId: body.contextId,
        config: target.config,
        secure: target.secure,
        core: target.facade,
        log: options.log,
        req: request.raw,
        res,
        lifetime,
        stream,
        files,
      });
      // An open breaker's or a full queue's refusal, returned for the same reason as above.
      if (result instanceof HttpError) return answerFailure(reply, call, lifetime, files, result, answer, stream);
      if (result instanceof FileResult) await answerFile(reply, call, result, answer, target.dir, files, 3 * options.config.rpc.streamHeartbeatMs);
      // Most calls made no folder: nothing to wait for.
      const disposing = files.dispose();
      if (disposing) await disposing;
      if (!(result instanceof FileResult)) answerResult(reply, call, result, answer, stream);
    } catch (error) {
      const answered = answerFailure(reply, call, lifetime, files, error, answer, stream);
      if (answered instanceof Promise) await answered;
    }
    return reply;
  }

  // Every verb Fastify routes reaches the handler, so that each gets 405 and its log event
  // (verbs Fastify does not know at all, such as PROPFIND, answer 404 NOT_FOUND).
  const everyMethod = app.supportedMethods;
  app.route<{ Params: RpcParams }>({ method: everyMethod, url: "/__rpc/:kind/:id/:method", handler: handle });
  // Fastify's router matches a parameter of at most 100 characters (`maxParamLength`), so
  // a longer kind, id or method name lands here: three segments are still a call, routed
  // like any other (an unknown long name is an unknown method, a long real one runs).
  // Anything else below /__rpc/ (too few or too many segments) names no target.
  app.route({
    method: everyMethod,
    url: "/__rpc/*",
    handler: async (request, reply) => {
      const params = callSegments(request.raw.url ?? "");
      if (params) {
        (request as FastifyRequest<{ Params: RpcParams }>).params = params;
        return handle(request as FastifyRequest<{ Params: RpcParams }>, reply);
      }
      const call = startCall(request.id, { kind: "", id: "", method: "" }, startRpcTrace(request, trustTraceContext));
      answerError(reply, call, errorOf("RPC_UNKNOWN_TARGET"), answer);
      return reply;
    },
  });
}

/** A failed or refused call: its uploads and folder are removed before the answer (no promise when there are none). */
function answerFailure(
  reply: FastifyReply,
  call: RpcCall,
  lifetime: CallLifetime,
  files: CallFiles,
  error: unknown,
  answer: AnswerOptions,
  stream: NdjsonStream | null,
): FastifyReply | Promise<FastifyReply> {
  // Refused before the method ran: nothing is left for the timer to bound.
  if (call.phase === "check") lifetime.dispose();
  const disposing = files.dispose();
  if (disposing) {
    return disposing.then(() => {
      answerError(reply, call, error, answer, stream);
      return reply;
    });
  }
  answerError(reply, call, error, answer, stream);
  return reply;
}

/** `/__rpc/<kind>/<id>/<method>` with three non-empty segments, each decoded as the router would; else null. */
function callSegments(url: string): RpcParams | null {
  const query = url.indexOf("?");
  const segments = (query === -1 ? url : url.slice(0, query)).slice("/__rpc/".length).split("/");
  if (segments.length !== 3 || segments.includes("")) return null;
  try {
    const [kind, id, method] = segments.map((segment) => decodeURIComponent(segment)) as [string, string, string];
    return { kind, id, method };
  } catch {
    return null;
  }
}
