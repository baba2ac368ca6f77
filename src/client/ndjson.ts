/**
 * Newline-delimited JSON in (docs/guides/browser.md "`HttpClient.stream`"): bytes arrive in
 * chunks that split lines and even UTF-8 characters anywhere, so the text is decoded in
 * stream mode and only complete lines are parsed. A line may end in `\r\n`; blank lines
 * are skipped. A malformed complete line is an error, not a line to skip: what follows it
 * could not be trusted either.
 */
import { ResponseParseError, StreamError } from "./errors.js";

/** The request a stream answers, for the errors it raises. */
export interface StreamOrigin {
  method: string;
  url: string;
  status: number;
}

const SKIP: unique symbol = Symbol("skip");

export class NdjsonDecoder {
  readonly #decoder = new TextDecoder("utf-8");
  readonly #origin: StreamOrigin;
  #pending = "";

  constructor(origin: StreamOrigin) {
    this.#origin = origin;
  }

  /**
   * The records completed by this chunk, in order, parsed one at a time so that the
   * records before a malformed line still reach the reader.
   */
  *push(chunk: Uint8Array): Generator<unknown, void, undefined> {
    const text = this.#pending + this.#decoder.decode(chunk, { stream: true });
    const end = text.lastIndexOf("\n");
    this.#pending = text.slice(end + 1);
    if (end === -1) return;
    for (const line of text.slice(0, end).split("\n")) {
      const record = this.#parse(line, false);
      if (record !== SKIP) yield record;
    }
  }

  /** The last record when the body ended without a newline after it. */
  end(): unknown[] {
    const rest = this.#pending + this.#decoder.decode();
    this.#pending = "";
    const record = this.#parse(rest, true);
    return record === SKIP ? [] : [record];
  }

  #parse(raw: string, last: boolean): unknown {
    const line = raw.endsWith("\r") ? raw.slice(0, -1) : raw;
    if (line.trim() === "") return SKIP;
    try {
      return JSON.parse(line) as unknown;
    } catch (error) {
      const { method, url, status } = this.#origin;
      if (last) {
        // Complete lines end in a newline; one without it that does not parse was cut off.
        throw new StreamError("CLIENT_STREAM_TRUNCATED", `${method} ${url}: the stream ended truncated mid-record`, {
          url,
          method,
          cause: error,
        });
      }
      throw new ResponseParseError(method, url, status, line, error, `${method} ${url} sent a stream line that is not valid JSON`);
    }
  }
}
