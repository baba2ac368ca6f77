/**
 * A method's `input` and `output` checks (docs/guides/server-methods.md "Server methods"), shared by the gateway,
 * the runtime and the testing kit so that all three accept and refuse the same calls.
 * Each returns its value synchronously when the validator does, a promise otherwise.
 */
import { errorOf, HttpError } from "../errors/http-error.js";
import { publicIssues, type PublicIssue } from "./issues.js";
import { runSchema, type StandardSchemaV1 } from "./standard-schema.js";

/**
 * The method's arguments once `input` has checked them: the schema's output (defaults and
 * transforms applied) as its one argument. The argument is `args[0]` (absent: undefined);
 * a second argument is a bad input, since nothing would check it. A bad input is the
 * returned 400 `RPC_BAD_INPUT`, not a throw (docs/reference/benchmarks.md "Refusals").
 */
export function checkArgs(schema: StandardSchemaV1, args: readonly unknown[]): unknown[] | HttpError | Promise<unknown[] | HttpError> {
  if (args.length > 1) return badInput([{ path: [], message: `Expected one argument, received ${args.length}` }]);
  const input = args[0];
  const result = runSchema(schema, input);
  if (result instanceof Promise) return result.then((settled) => argsOf(settled, input));
  return argsOf(result, input);
}

function argsOf(result: StandardSchemaV1.Result<unknown>, input: unknown): unknown[] | HttpError {
  if (result.issues) return badInput(publicIssues(result.issues, input));
  return [result.value];
}

function badInput(issues: PublicIssue[]): HttpError {
  return errorOf("RPC_BAD_INPUT", { issues });
}

const BAD_OUTPUT = "Method result does not match its declared output";

/**
 * A result checked against `output`: the schema's output is what is answered. A failure is
 * a bug in the method, 500 `RPC_BAD_RESULT`; its issues (values masked as for input) are
 * answered in dev mode only, and always go to the log.
 */
export function checkResult(schema: StandardSchemaV1, value: unknown, dev: boolean): unknown {
  const result = runSchema(schema, value);
  if (result instanceof Promise) return result.then((settled) => resultOf(settled, value, dev));
  return resultOf(result, value, dev);
}

function resultOf(result: StandardSchemaV1.Result<unknown>, value: unknown, dev: boolean): unknown {
  if (!result.issues) return result.value;
  const issues = publicIssues(result.issues, value);
  throw new BadOutputError(dev ? { issues } : {}, issues);
}

/** Marks an output failure, which the answer keeps (unlike a result JSON cannot carry, which it replaces). */
export class BadOutputError extends HttpError {
  constructor(details: Record<string, unknown>, issues: PublicIssue[]) {
    super(500, "RPC_BAD_RESULT", BAD_OUTPUT, details);
    // For the log: the issues, with the values already masked.
    this.cause = { issues };
  }
}
