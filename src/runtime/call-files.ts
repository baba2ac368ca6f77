/**
 * One call's files (docs/guides/files.md): the uploads it received, and its
 * temporary folder under `os.tmpdir()` (made on first need with mkdtemp, so a call that
 * needs none touches no disk). Everything goes when the call ends, whatever the outcome:
 * the gateway calls `dispose()` before it answers, and after a file answer is sent.
 */
import { createWriteStream, type WriteStream } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { once } from "node:events";
import type { Readable } from "node:stream";
import { UploadedFile, type UploadTransfer } from "./uploaded-file.js";

/** A file up to this size stays in memory; a larger one is written to the call's folder as it arrives. */
export const IN_MEMORY_MAX_BYTES = 64 * 1024;

export const TEMP_PREFIX = "counterpart-call-";

export class CallFiles {
  #dir: Promise<string> | undefined;
  // Made when a call has files: one of these is made for every call.
  /** Received files by their part index. */
  #files: Map<number, UploadedFile> | undefined;
  /** Where each file sits in the arguments, once placed. */
  #placements: Array<{ at: Array<string | number>; file: UploadedFile }> | undefined;
  /** Writes still going on: removal waits for them, so no file is created after it. */
  #writing: Set<Promise<unknown>> | undefined;
  #disposed = false;

  /** The call's temporary folder, made on first use. */
  dir(): Promise<string> {
    if (this.#disposed) return Promise.reject(new Error("the call has ended: its temporary folder is gone"));
    this.#dir ??= mkdtemp(join(tmpdir(), TEMP_PREFIX));
    return this.#dir;
  }

  /** True once the folder was asked for. */
  get hasDir(): boolean {
    return this.#dir !== undefined;
  }

  /**
   * A folder an isolation worker made for the call (`ctx.tempDir()` there): it becomes the
   * call's, answered from and removed with it. One made after the call ended goes at once.
   */
  adopt(path: string): void {
    if (this.#dir === undefined && !this.#disposed) {
      this.#dir = Promise.resolve(path);
      return;
    }
    this.#dir?.then((own) => {
      if (own !== path) void rm(path, { recursive: true, force: true, maxRetries: 3 }).catch(() => {});
    });
    if (this.#dir === undefined) void rm(path, { recursive: true, force: true, maxRetries: 3 }).catch(() => {});
  }

  /** The folder's path when it was made, for a download answer's check. */
  async madeDir(): Promise<string | undefined> {
    return this.#dir?.catch(() => undefined);
  }

  get hasFiles(): boolean {
    return this.#files !== undefined && this.#files.size > 0;
  }

  file(index: number): UploadedFile | undefined {
    return this.#files?.get(index);
  }

  indices(): Iterable<number> {
    return this.#files?.keys() ?? [];
  }

  place(at: Array<string | number>, file: UploadedFile): void {
    (this.#placements ??= []).push({ at, file });
  }

  placements(): ReadonlyArray<{ at: Array<string | number>; file: UploadedFile }> | undefined {
    return this.#placements;
  }

  transfers(): UploadTransfer[] {
    return (this.#placements ?? []).map(({ at, file }) => file.transfer(at));
  }

  /**
   * Reads one file part to its end: in memory up to IN_MEMORY_MAX_BYTES, then on disk, with
   * backpressure (the part is not read faster than the disk takes it). Rejects when the
   * part is destroyed (a refused upload) or the disk fails.
   */
  spool(index: number, name: string, type: string, part: Readable): Promise<void> {
    const writing = this.#spool(index, name, type, part);
    const pending = (this.#writing ??= new Set());
    pending.add(writing);
    const forget = () => pending.delete(writing);
    writing.then(forget, forget);
    return writing;
  }

  async #spool(index: number, name: string, type: string, part: Readable): Promise<void> {
    let chunks: Buffer[] = [];
    let size = 0;
    let out: WriteStream | undefined;
    let path: string | undefined;
    try {
      for await (const chunk of part as AsyncIterable<Buffer>) {
        size += chunk.length;
        if (!out) {
          if (size <= IN_MEMORY_MAX_BYTES) {
            chunks.push(chunk);
            continue;
          }
          path = join(await this.dir(), `upload-${index}`);
          out = createWriteStream(path, { flags: "wx" });
          for (const held of chunks) out.write(held, () => release(held));
          chunks = [];
        }
        if (!out.write(chunk, () => release(chunk))) await once(out, "drain");
      }
      if (out) {
        out.end();
        await once(out, "finish");
      }
    } catch (error) {
      out?.destroy();
      throw error;
    }
    const source = path === undefined ? { bytes: chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size) } : { path };
    (this.#files ??= new Map()).set(index, new UploadedFile({ name, type, size }, source));
  }

  /** Removes the folder and everything in it; nothing to do (and no promise) when none was made. */
  dispose(): Promise<void> | undefined {
    this.#disposed = true;
    const dir = this.#dir;
    if (dir === undefined) return undefined;
    return (async () => {
      await Promise.allSettled([...(this.#writing ?? [])]);
      const path = await dir.catch(() => undefined);
      if (path !== undefined) await rm(path, { recursive: true, force: true, maxRetries: 3 }).catch(() => {});
    })();
  }
}

/**
 * Frees a chunk's memory once it is on disk, when the chunk is the whole of its
 * ArrayBuffer (as the HTTP parser's body chunks are, and a file part's slice of one in the
 * middle of a file): nothing else can still need those bytes. Detaching frees the memory at
 * once instead of at the next garbage collection. Node 24's V8 lets some 64 MB of such
 * chunks wait for a full collection, which a 1 GiB upload turned into its peak; Node 20 has
 * no `transfer` and needs none (its young collections take them early).
 */
function release(chunk: Buffer): void {
  const { buffer } = chunk;
  if (chunk.byteOffset !== 0 || chunk.byteLength !== buffer.byteLength) return;
  (buffer as ArrayBuffer & { transfer?: (length: number) => ArrayBuffer }).transfer?.(0);
}
