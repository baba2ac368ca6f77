/**
 * `counterpart check`'s second gate: a `policy` entry that names no exported function.
 * The server only warns about one at start, and the function meant (`greet` for `greeet`)
 * silently keeps the default policy (session-bound), which a type-check cannot see: the
 * policy is a `Record<string, MethodPolicy>`. Read from the source as `counterpart types`
 * reads it (types-policy.ts), never run; a policy that cannot be read in full is left alone.
 */
import { relative } from "node:path";
import type * as TS from "typescript";
import { closest } from "../config/did-you-mean.js";
import type { TypeScript } from "./load-typescript.js";
import { readPolicy } from "./types-policy.js";

export interface PolicyProblem {
  file: string;
  name: string;
  didYouMean: string | undefined;
}

/** Every policy entry of `files` (absolute paths in `program`) that names no exported function. */
export function policyProblems(ts: TypeScript, program: TS.Program, files: readonly string[]): PolicyProblem[] {
  const checker = program.getTypeChecker();
  const problems: PolicyProblem[] = [];
  for (const file of files) {
    const source = program.getSourceFile(file);
    const module = source === undefined ? undefined : checker.getSymbolAtLocation(source);
    if (source === undefined || module === undefined) continue;
    const exports = checker.getExportsOfModule(module);
    const policy = readPolicy(ts, program, checker, exports.find((symbol) => symbol.name === "policy"));
    if (!policy.complete || policy.entries.size === 0) continue;
    const functions = exports.filter((symbol) => symbol.name !== "policy" && symbol.name !== "default" && maybeFunction(ts, checker, symbol, source)).map((symbol) => symbol.name);
    for (const name of policy.entries.keys()) {
      if (!functions.includes(name)) problems.push({ file, name, didYouMean: closest(name, functions) });
    }
  }
  return problems;
}

/** One line per problem, the file relative to `cwd` as tsc names files. */
export function formatPolicyProblem(problem: PolicyProblem, cwd: string): string {
  const hint = problem.didYouMean === undefined ? "" : `: did you mean "${problem.didYouMean}"? ("${problem.didYouMean}" keeps the default policy meanwhile)`;
  return `${relative(cwd, problem.file)}: error: policy entry "${problem.name}" names no exported function${hint}`;
}

/** A function, or a value whose type cannot be told (never a false alarm on an untyped export). */
function maybeFunction(ts: TypeScript, checker: TS.TypeChecker, symbol: TS.Symbol, source: TS.SourceFile): boolean {
  const target = symbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol;
  if (!(target.flags & ts.SymbolFlags.Value)) return (target.flags & ts.SymbolFlags.Type) === 0;
  const type = checker.getTypeOfSymbolAtLocation(target, source);
  return type.getCallSignatures().length > 0 || (type.flags & (ts.TypeFlags.Any | ts.TypeFlags.Unknown)) !== 0;
}
