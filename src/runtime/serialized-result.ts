import { errorOf, isHttpError } from "../errors/http-error.js";

/** A result already turned into JSON text (by an isolation worker): sent as is. */
export class SerializedResult {
  readonly json: string;

  constructor(json: string) {
    this.json = json;
  }
}

/**
 * A method's result as the answer carries it: `undefined` is `null`, and what JSON cannot
 * carry (a BigInt, a cycle) is `RPC_BAD_RESULT`. Exported for the testing entry, whose
 * `callMethod` must accept and refuse exactly what a real call does.
 */
export function toSerialized(result: unknown): SerializedResult {
  if (result instanceof SerializedResult) return result;
  let json: string | undefined;
  try {
    json = JSON.stringify(result === undefined ? null : result);
  } catch (error) {
    // A result quoting a session whose store is down: the store's answer, not a bad result.
    if (isHttpError(error)) throw error;
    // The serialiser's message may quote the method's data: it goes to the log only.
    throw Object.assign(errorOf("RPC_BAD_RESULT"), { cause: error });
  }
  return new SerializedResult(json ?? "null");
}
