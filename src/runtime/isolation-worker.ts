/**
 * The worker-thread side of `isolation: "worker"` (run by piscina). It holds no server
 * objects: it gets the serialisable context, imports the method's file (cached per file
 * version), runs it, and hands back the JSON text of the result, so the main thread sends
 * it as is and a non-serialisable result is caught here.
 */
import { mkdir } from "node:fs/promises";
import { receiveMessageOnPort, workerData } from "node:worker_threads";
import { isHttpError } from "../errors/http-error.js";
import { createAppServerApi, devModeOf } from "../plugin-api/app-server.js";
import { importServerFile, setModuleVersions } from "../discovery/import-server-file.js";
import { unpackIsolatedArgs } from "./isolated-args.js";
import { checkArgCount } from "./executor.js";
import { placeAt, UploadedFile } from "./uploaded-file.js";
import { emitOverPort, type WorkerEmitter } from "./isolated-emit.js";
import { notStreaming } from "./stream-sink.js";
import { FileResult } from "../plugin-api/file-result.js";
import { isolatedFileOf, sendFileStream } from "./isolated-file.js";
import { failWith } from "../validation/declared-errors.js";
import type { IsolatedOutcome, IsolatedTask, IsolationWorkerData, SessionFields } from "./isolated-task.js";
import { fieldsOf, sessionView, unavailableSessionView, type SessionView } from "../state/session-data.js";

const data = workerData as IsolationWorkerData;
const refuse = () => {
  throw new Error("verifiers are registered from boot hooks, not from isolated methods");
};
// Isolated methods reach the same server files the main thread does, loaded in this worker.
const targetScope = { itemDirs: new Map(data.itemDirs), importFile: (file: string) => importServerFile(file) };
globalThis.APP_SERVER = createAppServerApi({
  outbound: data.outbound,
  isDevMode: (ctx) => devModeOf(ctx) ?? data.dev,
  registerRpcAuthVerifier: refuse,
  registerProxyAuthVerifier: refuse,
  targetScope: () => targetScope,
});

/** The helper versions this worker's loader has, so that each dev reload is sent to it once. */
const appliedVersions = new Map<string, number>();

async function useModuleVersions(versions: ReadonlyArray<[string, number]>): Promise<void> {
  const changed = versions.filter(([file, version]) => appliedVersions.get(file) !== version);
  if (changed.length === 0) return;
  await setModuleVersions(changed);
  for (const [file, version] of changed) appliedVersions.set(file, version);
}

/** `ctx.session` in the worker: read-only `id` and `createdAt` as in the main thread. */
function rebuildSession(data: IsolatedTask["context"]["sessionData"]): SessionView | null {
  if (!data) return null;
  return data.fields ? sessionView(data.id, data.createdAt, new Map(data.fields)) : unavailableSessionView(data.id, data.createdAt);
}

/**
 * The session's fields after the method, for the main thread to save: none when the method
 * never looked at `ctx.session` or the store could not be reached.
 */
function sessionFields(session: SessionView | null, data: IsolatedTask["context"]["sessionData"]): { session?: Array<[string, string]> } {
  if (!session || !data?.fields) return {};
  return { session: [...fieldsOf(session)] };
}

export default async function runIsolated(task: IsolatedTask): Promise<IsolatedOutcome> {
  // A call that ended while it waited for this worker has its abort already queued on the
  // port, where a listener would only see it after the method started: read it now, so
  // that such a call never runs (and the signal starts aborted).
  const controller = new AbortController();
  let emitter: WorkerEmitter | undefined;
  let session: SessionView | null = null;
  // `ctx.tempDir()`: the call's folder when the main thread made one, else one made here
  // on first use and handed to the main thread with the outcome.
  let tempDir: Promise<string> | undefined;
  const madeTempDir = async (): Promise<{ tempDir?: string }> => {
    if (tempDir === undefined || task.tempDir !== undefined) return {};
    const path = await tempDir.catch(() => undefined);
    return path === undefined ? {} : { tempDir: path };
  };
  const abortIfPending = () => {
    if (!controller.signal.aborted && receiveMessageOnPort(task.abortPort) !== undefined) controller.abort(new Error("call aborted"));
    return controller.signal.aborted;
  };
  try {
    if (abortIfPending()) return { ok: false, aborted: true };
    task.abortPort.postMessage("started");
    task.abortPort.once("message", () => controller.abort(new Error("call aborted")));
    if (task.moduleVersions) await useModuleVersions(task.moduleVersions);
    const namespace = await importServerFile(task.file, task.version);
    const fn = namespace[task.method];
    if (typeof fn !== "function") throw new Error(`${task.file} no longer exports ${task.method}`);
    const args = unpackIsolatedArgs(task.args);
    for (const upload of task.uploads ?? []) placeAt(args, upload.at, UploadedFile.fromTransfer(upload));
    checkArgCount(args);
    if (abortIfPending()) return { ok: false, aborted: true };
    emitter = task.emitPort ? emitOverPort(task.emitPort) : undefined;
    const emit = emitter ? emitter.emit : notStreaming;
    const { sessionData, ...context } = task.context;
    const errors = task.errors && new Map(task.errors);
    const fail = (code: string, details?: Record<string, unknown>) => failWith(errors, task.method, code, details);
    const ctx = { ...context, args, signal: controller.signal, emit, fail } as Record<string, unknown>;
    // The reserved path is new and random: mkdir (not recursive) fails rather than reuse
    // anything already there, as mkdtemp would.
    ctx.tempDir = () => (tempDir ??= task.tempDir !== undefined ? Promise.resolve(task.tempDir) : makeReservedDir(task.reservedTempDir));
    // Rebuilt on first use only, as in the main thread: a method that never looks costs no parse.
    Object.defineProperty(ctx, "session", {
      enumerable: true,
      get: () => (session ??= rebuildSession(sessionData)),
    });
    const result = await (fn as (...args: unknown[]) => unknown)(ctx, ...args);
    // Every event is written before the outcome goes back: the terminal record comes last.
    await emitter?.settle();
    const fields = { ...sessionFields(session, sessionData), ...(await madeTempDir()) };
    if (result instanceof FileResult) {
      const file = isolatedFileOf(result);
      if (file) return { ok: true, file, ...fields };
      // A stream: announced now with what the main thread saves before answering, then
      // read here until the body's end.
      await sendFileStream(result, task.abortPort, controller.signal, fields);
      return { ok: true, file: null };
    }
    try {
      return { ok: true, json: JSON.stringify(result === undefined ? null : result) ?? "null", ...fields };
    } catch (error) {
      return { ok: false, badResult: (error as Error).message, ...fields };
    }
  } catch (error) {
    await emitter?.settle();
    const isRpc = isHttpError(error);
    let fields: SessionFields = await madeTempDir();
    try {
      fields = { ...fields, ...sessionFields(session, task.context.sessionData) };
    } catch {
      // The method's own error is the answer; a field it left unsaveable changes nothing.
    }
    return {
      ...fields,
      ok: false,
      error: {
        rpc: isRpc,
        status: isRpc ? error.status : 500,
        code: isRpc ? error.code : "RPC_INTERNAL_ERROR",
        message: error instanceof Error ? error.message : String(error),
        details: isRpc ? error.details : {},
        stack: error instanceof Error ? error.stack : undefined,
      },
    };
  } finally {
    // A method may go on emitting after it returned (a loop it did not await): those emits
    // reject rather than vanish into a closed port.
    emitter?.close();
    task.abortPort.close();
    task.emitPort?.close();
  }
}

async function makeReservedDir(path: string | undefined): Promise<string> {
  if (path === undefined) throw new Error("ctx.tempDir() is not available here");
  await mkdir(path, { mode: 0o700 });
  return path;
}
