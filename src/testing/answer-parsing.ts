/**
 * Reading the server's answers as a test asserts on them: a JSON body that may be
 * missing or not JSON at all, a stream's NDJSON records, and an error answer as the
 * `RpcCallError` a browser call would reject with.
 */
import { RpcCallError } from "./call-error.js";
import type { RawAnswer, RpcAnswerBody, StreamAnswer, StreamEnd } from "./wire-types.js";

/** The body as JSON, or null when it is empty or not JSON: a refusal may be either. */
export function parseJson(text: string): any {
  if (text === "") return null;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return null;
  }
}

/**
 * A streaming call's answer: its NDJSON records when the stream started, else the JSON
 * error it was refused with.
 */
export function streamAnswerOf(answer: RawAnswer): StreamAnswer {
  const text = answer.payload.toString("utf8");
  const base = { status: answer.status, headers: answer.headers, text, reqId: answer.reqId };
  if (!String(answer.headers["content-type"] ?? "").startsWith("application/x-ndjson")) {
    return { ...base, events: [], end: null, records: [], body: parseJson(text) ?? {} };
  }
  const records = text
    .split("\n")
    .filter((line) => line !== "")
    .map((line) => JSON.parse(line) as Record<string, any>);
  const events = records.filter((record) => Object.hasOwn(record, "event")).map((record) => record.event);
  const last = records.at(-1);
  return { ...base, events, end: last?.done === true ? (last as StreamEnd) : null, records, body: null };
}

/** An error answer (or a stream's error record) as the error the call rejects with. */
export function callErrorOf(status: number, body: RpcAnswerBody, text: string, reqId: string): RpcCallError {
  return new RpcCallError({
    status,
    message: typeof body.error === "string" ? body.error : text.slice(0, 200) || `HTTP ${status}`,
    code: typeof body.code === "string" ? body.code : undefined,
    details: body.details,
    body,
    reqId,
  });
}
