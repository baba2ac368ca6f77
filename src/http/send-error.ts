/**
 * The one way an error is answered, by every route: the JSON body `{ error, code, details }`
 * with the error's status (docs/reference/error-codes.md), `Retry-After` when the error says when to
 * come back, secrets masked as in the logs, and a lingering close when the request body was
 * left unread.
 */
import type { ServerResponse } from "node:http";
import type { FastifyReply } from "fastify";
import { isFromCodeTable, type HttpError } from "../errors/http-error.js";
import { maskJsonAnswer, type SecretMask } from "../log/mask-secrets.js";
import { closeAfterAnswer } from "./lingering-close.js";

export const JSON_TYPE = "application/json; charset=utf-8";

export interface SendErrorOptions {
  /** Masks configured secrets; only error messages a method wrote can carry one. */
  mask?: SecretMask | null;
  /** Extra headers, such as `Allow` on a 405. */
  headers?: Record<string, string>;
}

/** Answers `error` through Fastify's reply. */
export function sendError(reply: FastifyReply, error: HttpError, options: SendErrorOptions = {}): FastifyReply {
  closeAfterAnswer(reply.request.raw, reply.raw, keepsConnection(error));
  const retryAfter = retryAfterOf(error);
  if (retryAfter !== undefined) reply.header("retry-after", retryAfter);
  if (options.headers) reply.headers(options.headers);
  return reply.code(error.status).header("content-type", JSON_TYPE).send(errorJson(error, options.mask));
}

/** Answers `error` on a raw response, for a route that took the response over (the proxy once it forwards). */
export function sendRawError(res: ServerResponse, error: HttpError, options: SendErrorOptions = {}): void {
  if (res.destroyed || res.headersSent) return;
  const body = errorJson(error, options.mask);
  closeAfterAnswer(res.req, res, keepsConnection(error));
  const retryAfter = retryAfterOf(error);
  res.writeHead(error.status, {
    ...options.headers,
    ...(retryAfter === undefined ? {} : { "retry-after": retryAfter }),
    "content-type": JSON_TYPE,
    "content-length": Buffer.byteLength(body),
  });
  res.end(body);
}

/** `{"error":…,"code":…,"details":` for each code-table error's template: the same text every time. */
const answerPrefixes = new WeakMap<object, string>();

export function errorJson(error: HttpError, mask?: SecretMask | null): string {
  if (isFromCodeTable(error) && !Object.hasOwn(error, "message")) return codeTableJson(error);
  let json: string;
  try {
    json = JSON.stringify(error.toJSON());
  } catch {
    // A method's RpcError whose details cannot be serialised still answers its code.
    json = JSON.stringify({ error: error.message, code: error.code, details: {} });
  }
  return mask && !isFromCodeTable(error) ? maskJsonAnswer(json, mask) : json;
}

/**
 * A code-table error from `errorOf`: its message and code are its template's, written
 * once; only the details are serialised per answer (about a microsecond less per refusal).
 */
function codeTableJson(error: HttpError): string {
  const template = Object.getPrototypeOf(error) as object;
  let prefix = answerPrefixes.get(template);
  if (prefix === undefined) {
    prefix = `{"error":${JSON.stringify(error.message)},"code":${JSON.stringify(error.code)},"details":`;
    answerPrefixes.set(template, prefix);
  }
  let details: string;
  try {
    details = JSON.stringify(error.details) ?? "{}";
  } catch {
    details = "{}";
  }
  return `${prefix}${details}}`;
}

/** A refusal about the body itself (too large, too slow) never keeps the connection. */
function keepsConnection(error: HttpError): boolean {
  return error.status !== 413 && error.status !== 408;
}

/** `details.retryAfterMs` (a breaker's wait, say) as whole seconds, at least 1. */
function retryAfterOf(error: HttpError): string | undefined {
  const ms = error.details.retryAfterMs;
  return typeof ms === "number" ? String(Math.max(1, Math.ceil(ms / 1000))) : undefined;
}
