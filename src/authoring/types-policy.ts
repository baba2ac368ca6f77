/**
 * A server file's `policy` export as `counterpart types` needs it, read from the source
 * rather than run: which names it lists (for `server.rpc.expose: "policy"` and boot hooks)
 * and which of them set `runtime.streaming: true`. The declared type of a policy is
 * usually `Record<string, MethodPolicy>`, where `streaming` is just `boolean`, so the
 * object literal itself is read; the checker helps only with a value that is not a literal
 * there (a constant, say). What cannot be told is left open, never guessed.
 */
import type * as TS from "typescript";
import type { TypeScript } from "./load-typescript.js";

export interface PolicyReading {
  /** The method names the policy lists, each with `runtime.streaming` (undefined: cannot tell). */
  readonly entries: ReadonlyMap<string, boolean | undefined>;
  /** False when the policy may list names that were not read (a spread, a computed key, not a literal). */
  readonly complete: boolean;
}

export const NO_POLICY: PolicyReading = { entries: new Map(), complete: true };

export function readPolicy(ts: TypeScript, checker: TS.TypeChecker, policy: TS.Symbol | undefined): PolicyReading {
  if (policy === undefined) return NO_POLICY;
  const entries = new Map<string, boolean | undefined>();
  const complete = collectEntries(ts, checker, initializerOf(ts, checker, policy), entries, 0);
  return { entries, complete };
}

/** Reads the entries of a policy object into `entries`, later ones over earlier ones as at run time; false when some could not be read. */
function collectEntries(ts: TypeScript, checker: TS.TypeChecker, expression: TS.Expression | undefined, entries: Map<string, boolean | undefined>, depth: number): boolean {
  const literal = objectLiteralOf(ts, checker, expression, depth);
  if (literal === undefined) return false;
  let complete = true;
  for (const property of literal.properties) {
    if (ts.isSpreadAssignment(property)) {
      if (!collectEntries(ts, checker, property.expression, entries, depth + 1)) {
        complete = false;
        // What the spread brought may have replaced the entries before it.
        for (const name of entries.keys()) entries.set(name, undefined);
      }
      continue;
    }
    const name = propertyNameOf(ts, checker, property.name);
    if (name === undefined) {
      complete = false;
      continue;
    }
    entries.set(name, ts.isPropertyAssignment(property) || ts.isShorthandPropertyAssignment(property) ? streamingOf(ts, checker, valueOf(ts, property)) : undefined);
  }
  return complete;
}

function valueOf(ts: TypeScript, property: TS.PropertyAssignment | TS.ShorthandPropertyAssignment): TS.Expression {
  return ts.isPropertyAssignment(property) ? property.initializer : property.name;
}

/** `runtime.streaming` of one entry: true, false (absent counts as false), or undefined. */
function streamingOf(ts: TypeScript, checker: TS.TypeChecker, entry: TS.Expression): boolean | undefined {
  if (isNullish(ts, entry)) return false;
  const runtime = lookup(ts, checker, entry, "runtime", 0);
  if (runtime === ABSENT) return false;
  if (runtime === undefined) return literalBoolean(ts, checker, entry, ["runtime", "streaming"]);
  if (isNullish(ts, runtime)) return false;
  const streaming = lookup(ts, checker, runtime, "streaming", 0);
  if (streaming === ABSENT) return false;
  if (streaming === undefined) return literalBoolean(ts, checker, runtime, ["streaming"]);
  const value = unwrap(ts, streaming);
  if (value.kind === ts.SyntaxKind.TrueKeyword) return true;
  if (value.kind === ts.SyntaxKind.FalseKeyword || isNullish(ts, value)) return false;
  return booleanType(ts, checker.getTypeAtLocation(value));
}

const ABSENT = Symbol("absent");

/** The expression property `name` of an object has (spreads followed), ABSENT, or undefined when that cannot be read. */
function lookup(ts: TypeScript, checker: TS.TypeChecker, expression: TS.Expression, name: string, depth: number): TS.Expression | typeof ABSENT | undefined {
  const literal = objectLiteralOf(ts, checker, expression, depth);
  if (literal === undefined) return undefined;
  let found: TS.Expression | typeof ABSENT | undefined = ABSENT;
  for (const property of literal.properties) {
    if (ts.isSpreadAssignment(property)) {
      const inner = lookup(ts, checker, property.expression, name, depth + 1);
      if (inner !== ABSENT) found = inner;
      continue;
    }
    const key = propertyNameOf(ts, checker, property.name);
    if (key === undefined) found = undefined;
    else if (key === name) found = ts.isPropertyAssignment(property) || ts.isShorthandPropertyAssignment(property) ? valueOf(ts, property) : undefined;
  }
  return found;
}

function isNullish(ts: TypeScript, expression: TS.Expression): boolean {
  const node = unwrap(ts, expression);
  return node.kind === ts.SyntaxKind.NullKeyword || (ts.isIdentifier(node) && node.text === "undefined");
}

/** A property's value read from the checker's type, when that type is a boolean literal (an `as const`, say). */
function literalBoolean(ts: TypeScript, checker: TS.TypeChecker, expression: TS.Expression, path: string[]): boolean | undefined {
  let type = checker.getTypeAtLocation(expression);
  for (const name of path) {
    if (type.flags & (ts.TypeFlags.Undefined | ts.TypeFlags.Null)) return false;
    const property = checker.getPropertyOfType(type, name);
    if (property === undefined) return type.flags & ts.TypeFlags.Object && checker.getIndexInfosOfType(type).length === 0 ? false : undefined;
    type = checker.getTypeOfSymbolAtLocation(property, expression);
  }
  if (type.flags & ts.TypeFlags.Undefined) return false;
  return booleanType(ts, type);
}

function booleanType(ts: TypeScript, type: TS.Type): boolean | undefined {
  if (!(type.flags & ts.TypeFlags.BooleanLiteral)) return undefined;
  return (type as TS.Type & { intrinsicName?: string }).intrinsicName === "true";
}

/** The object literal an expression stands for, through `as`, `satisfies`, `Object.freeze()` and constants. */
function objectLiteralOf(ts: TypeScript, checker: TS.TypeChecker, expression: TS.Expression | undefined, depth: number): TS.ObjectLiteralExpression | undefined {
  if (expression === undefined || depth > 8) return undefined;
  const node = unwrap(ts, expression);
  if (ts.isObjectLiteralExpression(node)) return node;
  if (ts.isCallExpression(node) && node.arguments.length === 1 && /^Object\.freeze$/.test(node.expression.getText())) {
    return objectLiteralOf(ts, checker, node.arguments[0], depth + 1);
  }
  if (ts.isIdentifier(node)) {
    const symbol = checker.getSymbolAtLocation(node);
    return symbol === undefined ? undefined : objectLiteralOf(ts, checker, initializerOf(ts, checker, symbol), depth + 1);
  }
  return undefined;
}

/** The initializer of a `const` (through imports and re-exports). */
function initializerOf(ts: TypeScript, checker: TS.TypeChecker, symbol: TS.Symbol): TS.Expression | undefined {
  const resolved = symbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol;
  const declaration = resolved.valueDeclaration;
  if (declaration === undefined) return undefined;
  if (ts.isVariableDeclaration(declaration)) {
    // A `let` may be reassigned before the server reads it.
    return ts.getCombinedNodeFlags(declaration) & ts.NodeFlags.Const ? declaration.initializer : undefined;
  }
  if (ts.isShorthandPropertyAssignment(declaration)) return declaration.name;
  return undefined;
}

function unwrap(ts: TypeScript, expression: TS.Expression): TS.Expression {
  let node = expression;
  for (;;) {
    if (ts.isParenthesizedExpression(node) || ts.isAsExpression(node) || ts.isSatisfiesExpression(node) || ts.isTypeAssertionExpression(node) || ts.isNonNullExpression(node)) {
      node = node.expression;
    } else {
      return node;
    }
  }
}

function propertyNameOf(ts: TypeScript, checker: TS.TypeChecker, name: TS.PropertyName): string | undefined {
  if (ts.isIdentifier(name) || ts.isStringLiteral(name) || ts.isNumericLiteral(name) || ts.isNoSubstitutionTemplateLiteral(name)) return name.text;
  if (ts.isComputedPropertyName(name)) {
    const type = checker.getTypeAtLocation(name.expression);
    if (type.isStringLiteral()) return type.value;
    if (type.isNumberLiteral()) return String(type.value);
  }
  return undefined;
}
