/**
 * The RPC gateway: `POST /__rpc/{module|plugin}/<id>/<method>`. One visible path per call,
 * each step its own module, the first failing step answers (CONTRACT section 5):
 *   route → target → session, CSRF, origin → bounded body → verifiers
 *     → runtime (breaker → queue → executor) → answer + one log event.
 */
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { errorOf } from "../errors/http-error.js";
import { resolveVerifierContext, runRpcVerifiers } from "../auth/rpc-verifiers.js";
import { refreshTarget } from "../discovery/dev-reload.js";
import type { RpcRuntime } from "../runtime/runtime.js";
import type { ServerCore } from "../server/core.js";
import { checkAccess } from "./access.js";
import { answerError, answerResult, type AnswerOptions } from "./answer.js";
import { ClientGoneError, parseRpcBody, readBoundedBody } from "./body.js";
import { startCall } from "./call.js";
import { resolveMethod, resolveTargetItem } from "./target.js";


interface RpcParams {
  kind: string;
  id: string;
  method: string;
}

export async function rpcRoutes(app: FastifyInstance, options: { core: ServerCore; runtime: RpcRuntime }): Promise<void> {
  const { core, runtime } = options;
  const answer: AnswerOptions = { dev: core.dev, log: core.log, listeners: core.rpcEventListeners };
  const originPolicy = { allowedOrigins: core.config.allowedOrigins, trustProxy: core.config.trustProxy };

  // Errors Fastify raises before the handler (a malformed Content-Type, say) are answered
  // in the RPC shape and logged as the call's one event.
  app.setErrorHandler((error: FastifyError, request, reply) => {
    const params = (request.params ?? {}) as Partial<RpcParams>;
    const call = startCall(request.id, { kind: params.kind ?? "", id: params.id ?? "", method: params.method ?? "" });
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
  // method's own `maxBodyBytes`, so Fastify must leave the stream alone.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser("*", (_request, _payload, done) => done(null, undefined));

  async function handle(request: FastifyRequest<{ Params: RpcParams }>, reply: FastifyReply) {
    const call = startCall(request.id, request.params);
    // The call's one controller: aborted here when the client goes away, and by the
    // runtime when the call's timeout passes. Its signal is `ctx.signal`.
    const controller = new AbortController();
    reply.raw.once("close", () => {
      if (!reply.raw.writableFinished && !controller.signal.aborted) controller.abort(new ClientGoneError());
    });
    try {
      if (request.method !== "POST") throw errorOf("RPC_METHOD_NOT_ALLOWED");
      const target = resolveTargetItem(core.registry, call.kind, call.id);
      if (core.dev && target.files.length > 0) await refreshTarget(target, core.config.rpc, core.log);
      const entry = resolveMethod(target, call.method);
      const access = await checkAccess(request, entry, core.sessionChecks, originPolicy);
      const body = parseRpcBody(await readBoundedBody(request.raw, entry.policy.maxBodyBytes, entry.policy.timeoutMs, controller.signal));
      const resolved = resolveVerifierContext(core.config.rpcVerifiers, body.contextId);
      call.contextId = resolved.name;
      const user = access.isPublic
        ? null
        : await runRpcVerifiers(
            {
              req: request.raw,
              res: reply.raw,
              core,
              contextId: body.contextId,
              kind: entry.kind,
              id: entry.id,
              method: entry.name,
              resolved,
              requireSession: entry.policy.requireSession,
            },
            core.rpcVerifiers,
            core.log,
          );
      const result = await runtime.run({
        entry,
        call,
        args: body.args,
        session: access.session ? { id: access.session.id } : null,
        user,
        viewerId: body.viewerId,
        contextId: body.contextId,
        config: target.config,
        log: core.log,
        req: request.raw,
        res: reply.raw,
        controller,
      });
      answerResult(reply, call, result, answer);
    } catch (error) {
      answerError(reply, call, error, answer);
    }
    return reply;
  }

  // Every verb Fastify routes reaches the handler, so that each gets 405 and its log event
  // (verbs Fastify does not know at all, such as PROPFIND, answer 404 NOT_FOUND).
  const everyMethod = app.supportedMethods;
  app.route<{ Params: RpcParams }>({ method: everyMethod, url: "/__rpc/:kind/:id/:method", handler: handle });
  // Anything else below /__rpc/ (too few or too many segments) names no target.
  app.route({
    method: everyMethod,
    url: "/__rpc/*",
    handler: async (request, reply) => {
      const call = startCall(request.id, { kind: "", id: "", method: "" });
      answerError(reply, call, errorOf("RPC_UNKNOWN_TARGET"), answer);
      return reply;
    },
  });
}
