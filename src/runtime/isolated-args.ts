/**
 * An isolated method's arguments cross to the worker as bytes serialised here, with the
 * same serialiser `postMessage` uses (so the same values pass, at the same cost). Done in
 * the open rather than inside the pool, a value that cannot cross (JSON that parses fine
 * but nests too deep to serialise) is told apart from a worker that died: the caller's
 * input is at fault, answered 400 `RPC_BAD_REQUEST` before the call takes a queue slot or
 * a worker (docs/guides/server-methods.md "Runtime protections").
 */
import { deserialize, serialize } from "node:v8";
import { errorOf } from "../errors/http-error.js";
import { placeAt, type UploadedFile } from "./uploaded-file.js";

const REASON = "args-not-transferable";
const MESSAGE = "The arguments cannot be passed to an isolated method";

function refused(cause: unknown): Error {
  return Object.assign(errorOf("RPC_BAD_REQUEST", { reason: REASON }, MESSAGE), { cause });
}

/**
 * Main thread: the bytes to send, or a 400 RpcError. Uploads cross beside the arguments
 * (their place in them, and their file), not inside: a user's JSON can never pass for one.
 */
export function packIsolatedArgs(args: unknown[], uploads?: ReadonlyArray<{ at: Array<string | number>; file: UploadedFile }>): Uint8Array {
  const placed = uploads !== undefined && uploads.length > 0;
  if (placed) for (const { at } of uploads) placeAt(args, at, null);
  try {
    return serialize(args);
  } catch (error) {
    throw refused(error);
  } finally {
    if (placed) for (const { at, file } of uploads) placeAt(args, at, file);
  }
}

/** Worker: the arguments back, or the same 400 (a worker may have a smaller stack). */
export function unpackIsolatedArgs(bytes: Uint8Array): unknown[] {
  try {
    return deserialize(bytes) as unknown[];
  } catch (error) {
    throw refused(error);
  }
}
