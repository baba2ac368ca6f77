/**
 * `UploadedFile` (docs/guides/files.md): what a method receives where the browser
 * put a `Blob` or `File`. It reads like a Blob (`stream()`, `arrayBuffer()`, `text()`), backed
 * by the bytes themselves when the file is small, else by the call's temporary file. The
 * same class is rebuilt in an isolation worker from a transfer record, so an isolated method
 * gets the same object, reading the same temporary file.
 */
import { open, readFile } from "node:fs/promises";

/**
 * Read size of `stream()`. Every chunk is the reader's to keep, so each is new memory that
 * only a garbage collection frees; V8 collects such chunks once enough of them wait, and
 * counts that in memory (64 KiB chunks let some 64 MB wait on Node 24) more than in
 * objects made (16 KiB chunks make four times as many, which starts a young collection
 * after half as much). Measured: a 1 GiB file read whole grows the peak by 32 MB on Node
 * 20 and 24 with 16 KiB, by 64 MB on Node 24 with 64 KiB.
 */
const READ_CHUNK = 16 * 1024;

/** An UploadedFile as it crosses to a worker; `at` is where it sits in the arguments. */
export interface UploadTransfer {
  at: Array<string | number>;
  name: string;
  type: string;
  size: number;
  path: string | undefined;
  bytes: Uint8Array | undefined;
}

export class UploadedFile {
  readonly name: string;
  readonly type: string;
  readonly size: number;
  readonly #path: string | undefined;
  readonly #bytes: Uint8Array | undefined;

  constructor(meta: { name: string; type: string; size: number }, source: { path: string } | { bytes: Uint8Array }) {
    this.name = meta.name;
    this.type = meta.type;
    this.size = meta.size;
    this.#path = "path" in source ? source.path : undefined;
    this.#bytes = "bytes" in source ? source.bytes : undefined;
  }

  static fromTransfer(transfer: UploadTransfer): UploadedFile {
    const source = transfer.path === undefined ? { bytes: transfer.bytes ?? new Uint8Array(0) } : { path: transfer.path };
    return new UploadedFile(transfer, source);
  }

  transfer(at: Array<string | number>): UploadTransfer {
    return { at, name: this.name, type: this.type, size: this.size, path: this.#path, bytes: this.#bytes };
  }

  /** The bytes as a Web stream, read from disk as the reader pulls (never the whole file at once). */
  stream(): ReadableStream<Uint8Array> {
    const bytes = this.#bytes;
    if (bytes) {
      return new ReadableStream<Uint8Array>({
        start(controller) {
          if (bytes.length > 0) controller.enqueue(bytes.slice());
          controller.close();
        },
      });
    }
    const path = this.#path!;
    let handle: import("node:fs/promises").FileHandle | undefined;
    return new ReadableStream<Uint8Array>(
      {
        async pull(controller) {
          handle ??= await open(path, "r");
          const buffer = new Uint8Array(READ_CHUNK);
          const { bytesRead } = await handle.read(buffer, 0, READ_CHUNK, null);
          if (bytesRead === 0) {
            await handle.close();
            controller.close();
            return;
          }
          controller.enqueue(bytesRead === READ_CHUNK ? buffer : buffer.subarray(0, bytesRead));
        },
        async cancel() {
          await handle?.close();
        },
      },
      { highWaterMark: 0 },
    );
  }

  async arrayBuffer(): Promise<ArrayBuffer> {
    const bytes = this.#bytes ?? (await readFile(this.#path!));
    return bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer;
  }

  async text(): Promise<string> {
    return new TextDecoder().decode(this.#bytes ?? (await readFile(this.#path!)));
  }

  /** Logged or answered as its description: never the server's temporary path. */
  toJSON(): { name: string; type: string; size: number } {
    return { name: this.name, type: this.type, size: this.size };
  }

  get [Symbol.toStringTag](): string {
    return "UploadedFile";
  }
}

/** Sets `value` at `at` inside `root` (a path of keys and indices the upload parser recorded). */
export function placeAt(root: unknown[], at: ReadonlyArray<string | number>, value: unknown): void {
  let node: Record<string | number, unknown> = root as unknown as Record<string | number, unknown>;
  for (let i = 0; i < at.length - 1; i += 1) node = node[at[i]!] as Record<string | number, unknown>;
  node[at[at.length - 1]!] = value;
}
