/** What crosses the thread boundary for one isolated call, both ways. */
import type { IsolatedContextData } from "./invocation.js";
import type { DeclaredError } from "../validation/declared-errors.js";
import type { UploadTransfer } from "./uploaded-file.js";
import type { IsolatedFile } from "./isolated-file.js";

export interface IsolatedTask {
  file: string;
  /** The version the main thread loaded (dev reloads), so an edit is re-imported in the worker too. */
  version: number | undefined;
  /** Dev reloads: the versions of the helpers the main thread loaded the file with. */
  moduleVersions: ReadonlyArray<[string, number]> | undefined;
  method: string;
  context: IsolatedContextData;
  /** `ctx.args`, serialised by `packIsolatedArgs` with each upload left as null. */
  args: Uint8Array;
  /** The policy's declared errors, for `ctx.fail` in the worker; null when it declares none. */
  errors: Array<[string, DeclaredError]> | null;
  /** The uploads and where they go in `args`: rebuilt as UploadedFile, reading the same temporary files. */
  uploads: UploadTransfer[] | undefined;
  /** Receives one message when the call is aborted; it fires `ctx.signal` in the worker.
   * The worker sends one back when it takes the task, so the pool knows it left the queue. */
  abortPort: import("node:worker_threads").MessagePort;
  /** The call's temporary folder when the main thread made one already (its uploads are there): `ctx.tempDir()` in the worker. */
  tempDir: string | undefined;
  /**
   * Otherwise the path the worker makes its folder at, on first use: chosen here, so that
   * the main thread can remove it even when the worker is terminated before it hands the
   * folder back (docs/guides/files.md: nothing of a call stays on disk).
   */
  reservedTempDir: string | undefined;
  /** Streaming methods only: carries `ctx.emit` to the main thread (src/runtime/isolated-emit.ts). */
  emitPort: import("node:worker_threads").MessagePort | undefined;
}

export interface IsolatedError {
  /** True for an RpcError thrown on purpose: its status, code and details are answered. */
  rpc: boolean;
  status: number;
  code: string;
  message: string;
  details: Record<string, unknown>;
  stack: string | undefined;
}

/**
 * The fields the method left in `ctx.session` (name → JSON text), when it had a session to
 * save; and the temporary folder `ctx.tempDir()` made in the worker, for the main thread to
 * remove with the call's.
 */
export type SessionFields = { session?: Array<[string, string]>; tempDir?: string };

export type IsolatedOutcome =
  | ({ ok: true; json: string } & SessionFields)
  /** `APP_SERVER.file`: its bytes or path; null when it was a stream, already announced on the abort port (src/runtime/isolated-file.ts). */
  | ({ ok: true; file: IsolatedFile | null } & SessionFields)
  | ({ ok: false; badResult: string } & SessionFields)
  | ({ ok: false; error: IsolatedError } & SessionFields)
  /** The call had ended before the method started: it never ran. */
  | { ok: false; aborted: true };

export interface IsolationWorkerData {
  dev: boolean;
  outbound: { allow: readonly string[]; timeoutMs: number };
  /** `kind/id` → folder of every plugin and module, for importServerModule in isolated methods. */
  itemDirs: Array<[string, string]>;
}
