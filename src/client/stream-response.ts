/**
 * The OK answer `HttpClient.stream()` resolves to (docs/guides/browser.md
 * "`HttpClient.stream`"): its headers, and its body as NDJSON records read as they arrive
 * (or whole, as text or a Blob).
 * The body has no timeout of its own; the caller's signal and `cancel()` end it, and so
 * does leaving `lines()` early, which releases the connection instead of leaving the
 * server writing into a body nobody reads.
 */
import { NdjsonDecoder } from "./ndjson.js";

export interface StreamResponse {
  readonly status: number;
  /** Always true: a non-2xx answer rejects instead. */
  readonly ok: boolean;
  readonly headers: Headers;
  /** The final URL (baseURL, proxy prefix and query applied). */
  readonly url: string;
  /** The fetch Response; its body is the one `lines()` reads. */
  readonly raw: Response;
  /** The body's records, one per line. The body can be read once, by this or `text()`. */
  lines<T = unknown>(): AsyncIterableIterator<T>;
  /** The whole body as text, for an answer that turned out not to be NDJSON. */
  text(): Promise<string>;
  /** The whole body as a Blob of the answer's content type, for an answer that is a file. */
  blob(): Promise<Blob>;
  /** Ends the body: a `lines()` loop throws `reason` (an AbortError by default). */
  cancel(reason?: unknown): void;
}

export class NdjsonResponse implements StreamResponse {
  readonly status: number;
  readonly ok: boolean;
  readonly headers: Headers;
  readonly url: string;
  readonly raw: Response;
  readonly #method: string;
  readonly #signal: AbortSignal | undefined;
  readonly #onChunk: ((chunk: Uint8Array) => void) | undefined;
  readonly #onAbort = (): void => this.cancel(this.#signal?.reason);
  #reader: ReadableStreamDefaultReader<Uint8Array> | undefined;
  #read = false;
  #ended = false;
  #cancelled: { reason: unknown } | undefined;

  constructor(response: Response, method: string, url: string, signal: AbortSignal | undefined, onChunk?: (chunk: Uint8Array) => void) {
    this.raw = response;
    this.status = response.status;
    this.ok = response.ok;
    this.headers = response.headers;
    this.url = url;
    this.#method = method;
    this.#signal = signal;
    this.#onChunk = onChunk;
    signal?.addEventListener("abort", this.#onAbort, { once: true });
    if (signal?.aborted) this.cancel(signal.reason);
  }

  lines<T = unknown>(): AsyncIterableIterator<T> {
    return this.#records(this.#chunks()) as AsyncIterableIterator<T>;
  }

  async text(): Promise<string> {
    const decoder = new TextDecoder("utf-8");
    let text = "";
    for await (const chunk of this.#chunks()) text += decoder.decode(chunk, { stream: true });
    return text + decoder.decode();
  }

  async blob(): Promise<Blob> {
    const parts: Uint8Array[] = [];
    for await (const chunk of this.#chunks()) parts.push(chunk);
    return new Blob(parts as BlobPart[], { type: this.headers.get("content-type") ?? "" });
  }

  cancel(reason?: unknown): void {
    if (this.#ended || this.#cancelled !== undefined) return;
    this.#cancelled = { reason: reason ?? new DOMException("The stream was cancelled", "AbortError") };
    this.#end();
    const stop = this.#reader?.cancel(this.#cancelled.reason) ?? this.raw.body?.cancel(this.#cancelled.reason);
    // A body that already failed rejects its cancel; the reader's own error is reported there.
    stop?.catch(() => undefined);
  }

  async *#records(chunks: AsyncGenerator<Uint8Array, void, undefined>): AsyncGenerator<unknown, void, undefined> {
    const decoder = new NdjsonDecoder({ method: this.#method, url: this.url, status: this.status });
    for await (const chunk of chunks) yield* decoder.push(chunk);
    yield* decoder.end();
  }

  /** The body's bytes; leaving the loop early (break, throw) cancels the rest of the body. */
  #chunks(): AsyncGenerator<Uint8Array, void, undefined> {
    if (this.#read) throw new TypeError("HttpClient.stream: the body can be read once, by lines(), text() or blob()");
    this.#read = true;
    return this.#readBody();
  }

  async *#readBody(): AsyncGenerator<Uint8Array, void, undefined> {
    this.#throwIfCancelled();
    const body = this.raw.body;
    if (body === null) return this.#end();
    const reader = body.getReader();
    this.#reader = reader;
    let drained = false;
    try {
      for (;;) {
        const { done, value } = await reader.read();
        // A cancelled body reads as ended; that is the caller's stop, not the server's end.
        this.#throwIfCancelled();
        if (done) {
          drained = true;
          return;
        }
        this.#onChunk?.(value);
        yield value;
      }
    } finally {
      this.#end();
      if (!drained) reader.cancel().catch(() => undefined);
    }
  }

  #throwIfCancelled(): void {
    if (this.#cancelled !== undefined) throw this.#cancelled.reason;
  }

  #end(): void {
    this.#ended = true;
    this.#signal?.removeEventListener("abort", this.#onAbort);
  }
}
