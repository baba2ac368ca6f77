/**
 * The input step of the gateway (docs/guides/server-methods.md "Server methods"): a method whose policy declares
 * `input` has its argument checked after the verifiers and the stream-mode check, before
 * the breaker and the queue, so that a bad input takes no concurrency slot, counts for no
 * breaker and starts no worker or stream. Isolated methods are checked here too: the
 * worker gets the parsed value. Methods without `input` never reach this step.
 */
import type { HttpError } from "../errors/http-error.js";
import type { StandardSchemaV1 } from "../validation/standard-schema.js";
import { checkArgs } from "../validation/check.js";
import type { CallLifetime } from "../runtime/call-lifetime.js";

/**
 * The arguments the method receives, or the 400 `RPC_BAD_INPUT` to answer. An async
 * validator runs under the call's `timeoutMs` (504 `RPC_TIMEOUT` when it does not settle in time).
 */
export function validateInput(schema: StandardSchemaV1, args: readonly unknown[], lifetime: CallLifetime): unknown[] | HttpError | Promise<unknown[] | HttpError> {
  const checked = checkArgs(schema, args);
  return checked instanceof Promise ? lifetime.race(checked) : checked;
}
