/**
 * `APP_SERVER.file(source, { type, name, inline? })` (docs/guides/files.md): what
 * a method returns to answer a file instead of JSON. Checked when it is made, so that a
 * method passing a bad type or name fails where it is written; the gateway opens and sends
 * it (src/rpc/file-answer.ts).
 */
import { Readable } from "node:stream";

export type FileSource = Uint8Array | ReadableStream<Uint8Array> | Readable | string;

export interface FileOptions {
  /** The answer's Content-Type; default `application/octet-stream`. */
  type?: string;
  /** The file name the browser saves it as. */
  name?: string;
  /** `Content-Disposition: inline` rather than `attachment`. */
  inline?: boolean;
}

/** A MIME type with optional parameters: nothing that could end the header or start another. */
const MIME_TYPE = /^[a-z0-9!#$&^_.+-]+\/[a-z0-9!#$&^_.+-]+(?:\s*;\s*[a-z0-9!#$&^_.+-]+=(?:[a-z0-9!#$&^_.+-]+|"[^"\\\r\n\x00-\x1f]*"))*$/i;

export class FileResult {
  readonly source: FileSource;
  readonly type: string;
  readonly name: string | undefined;
  readonly inline: boolean;

  constructor(source: FileSource, options: FileOptions) {
    this.source = source;
    this.type = options.type ?? "application/octet-stream";
    this.name = options.name;
    this.inline = options.inline === true;
  }

  /** Returned, it is the answer itself; inside a JSON result it cannot be (RPC_BAD_RESULT). */
  toJSON(): never {
    throw new TypeError("APP_SERVER.file() is the whole answer: it cannot be part of a JSON result");
  }
}

export function file(source: unknown, options: FileOptions = {}): FileResult {
  const ok =
    source instanceof Uint8Array ||
    typeof source === "string" ||
    source instanceof Readable ||
    (typeof ReadableStream !== "undefined" && source instanceof ReadableStream);
  if (!ok) throw new TypeError("APP_SERVER.file: the source must be bytes, a Web or Node readable stream, or a file path");
  if (options === null || typeof options !== "object") throw new TypeError("APP_SERVER.file: options must be an object");
  if (options.type !== undefined && (typeof options.type !== "string" || !MIME_TYPE.test(options.type))) {
    throw new TypeError("APP_SERVER.file: type must be a MIME type such as text/csv; charset=utf-8");
  }
  if (options.name !== undefined && (typeof options.name !== "string" || options.name.length > 255)) {
    throw new TypeError("APP_SERVER.file: name must be a string of at most 255 characters");
  }
  return new FileResult(source as FileSource, options);
}
