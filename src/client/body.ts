/**
 * Request bodies out and response bodies in (docs/guides/browser.md "Request options"):
 * objects become JSON with a content type, the body types fetch understands go
 * untouched, and `expect` decides how an answer is parsed.
 */
import { ResponseParseError } from "./errors.js";
import type { ExpectMode } from "./types.js";

export interface PreparedBody {
  body: BodyInit | undefined;
  /** Set when the client chose the content type (JSON); fetch picks it for the others. */
  contentType: string | undefined;
  /** A stream can be sent once: no retry, no replay after a 401. */
  replayable: boolean;
}

export function prepareBody(body: unknown, method: string): PreparedBody {
  if (body === undefined || body === null) return { body: undefined, contentType: undefined, replayable: true };
  if (method === "GET" || method === "HEAD") {
    // fetch would throw a TypeError, which the retry logic would take for a network error.
    throw new TypeError(`HttpClient: a ${method} request cannot carry a body; use the query option`);
  }
  if (isPassThrough(body)) {
    return { body: body as BodyInit, contentType: undefined, replayable: !isStream(body) };
  }
  const json = JSON.stringify(body);
  if (json === undefined) throw new TypeError("HttpClient: the request body cannot be serialised to JSON");
  return { body: json, contentType: "application/json", replayable: true };
}

function isPassThrough(body: unknown): boolean {
  return (
    typeof body === "string" ||
    body instanceof ArrayBuffer ||
    ArrayBuffer.isView(body) ||
    (typeof Blob !== "undefined" && body instanceof Blob) ||
    (typeof FormData !== "undefined" && body instanceof FormData) ||
    (typeof URLSearchParams !== "undefined" && body instanceof URLSearchParams) ||
    isStream(body)
  );
}

export function isStream(body: unknown): boolean {
  return typeof ReadableStream !== "undefined" && body instanceof ReadableStream;
}

const JSON_TYPE = /^application\/(?:[\w.+-]*\+)?json\b|^text\/json\b/i;

export function isJsonContentType(contentType: string | null): boolean {
  return contentType !== null && JSON_TYPE.test(contentType.trim());
}

/** Parses a 2xx answer per `expect`; a 204, 205, HEAD or empty body gives null (text: ""). */
export async function readSuccessBody(
  response: Response,
  expect: ExpectMode,
  method: string,
  url: string,
): Promise<unknown> {
  if (expect === "blob") return response.blob();
  if (expect === "arrayBuffer") return response.arrayBuffer();
  if (expect === "stream") return response.body;
  const text = method === "HEAD" ? "" : await response.text();
  if (expect === "text") return text;
  const noContent = response.status === 204 || response.status === 205 || text === "";
  if (noContent) return null;
  if (expect === "auto" && !isJsonContentType(response.headers.get("content-type"))) return text;
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    throw new ResponseParseError(method, url, response.status, text, error);
  }
}

/** The body of an error answer: parsed JSON when it is JSON, otherwise its text. */
export async function readErrorBody(response: Response, method: string): Promise<unknown> {
  const text = method === "HEAD" ? "" : await response.text();
  if (text !== "" && (isJsonContentType(response.headers.get("content-type")) || /^\s*[{[]/.test(text))) {
    try {
      return JSON.parse(text) as unknown;
    } catch {
      return text;
    }
  }
  return text;
}
