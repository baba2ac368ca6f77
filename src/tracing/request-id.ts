/**
 * The request id: a well-formed incoming `X-Request-Id` (a load balancer's or the caller's)
 * or one made here. It is answered in `X-Request-Id`, sent upstream by the proxy, and is the
 * `reqId` of the request's log events and `ctx.requestId` (docs/reference/log-events.md).
 */
import { randomUUID } from "node:crypto";

/**
 * 1–128 characters a log line, a header and a URL carry as they are: an id with a space,
 * a quote, a newline or a comma (Node joins repeated headers with ", ") is never used, and
 * never echoed; a new one is made instead.
 */
const WELL_FORMED = /^[A-Za-z0-9._:-]{1,128}$/;

export function isWellFormedRequestId(value: unknown): value is string {
  return typeof value === "string" && WELL_FORMED.test(value);
}

/**
 * `trustIncoming` false (`server.requestId.trustIncoming`): every request gets a new id,
 * for an edge that passes on whatever clients send.
 */
export function requestIdFor(header: string | string[] | undefined, trustIncoming: boolean): string {
  return trustIncoming && isWellFormedRequestId(header) ? header : randomUUID();
}
