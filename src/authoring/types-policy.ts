/**
 * A server file's `policy` export as `counterpart types` needs it, read from the source
 * rather than run: which names it lists (for `server.rpc.expose: "policy"` and boot hooks)
 * and which of them set `runtime.streaming: true`. The declared type of a policy is
 * usually `Record<string, MethodPolicy>`, where `streaming` is just `boolean`, so the
 * object literal itself is read; the checker helps only with a value that is not a literal
 * there (a constant, say). What cannot be told is left open, never guessed, and so is a
 * policy the app changes after its literal (`policy.x = …`, `Object.assign(policy, …)`,
 * `delete`, or handing it to code that may): the literal is then not what the server reads.
 */
import type * as TS from "typescript";
import type { TypeScript } from "./load-typescript.js";

export interface PolicyReading {
  /** The method names the policy lists, each with `runtime.streaming` (undefined: cannot tell). */
  readonly entries: ReadonlyMap<string, boolean | undefined>;
  /** False when the policy may list names that were not read (a spread, a computed key, not a literal). */
  readonly complete: boolean;
  /** Where the app may change the policy object (or hands it on): nothing of its literal is trusted then. */
  readonly changedAt?: TS.Node;
}

export const NO_POLICY: PolicyReading = { entries: new Map(), complete: true };

export function readPolicy(ts: TypeScript, program: TS.Program, checker: TS.TypeChecker, policy: TS.Symbol | undefined): PolicyReading {
  if (policy === undefined) return NO_POLICY;
  const changedAt = firstChange(ts, program, checker, policy.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(policy) : policy);
  if (changedAt !== undefined) return { entries: new Map(), complete: false, changedAt };
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

const identifiers = new WeakMap<TS.Program, { files: TS.SourceFile[]; byName: Map<string, TS.Identifier[]> }>();

/** The identifiers of the program's own files by name, gathered once per program. */
function identifiersOf(ts: TypeScript, program: TS.Program) {
  let found = identifiers.get(program);
  if (found !== undefined) return found;
  const files = program.getSourceFiles().filter((file) => !file.isDeclarationFile && !program.isSourceFileFromExternalLibrary(file));
  const byName = new Map<string, TS.Identifier[]>();
  const visit = (node: TS.Node): void => {
    if (ts.isIdentifier(node)) {
      const list = byName.get(node.text);
      if (list === undefined) byName.set(node.text, [node]);
      else list.push(node);
    }
    ts.forEachChild(node, visit);
  };
  for (const file of files) visit(file);
  identifiers.set(program, (found = { files, byName }));
  return found;
}

/**
 * The first reference to `target` in the app's own files that may change the object or
 * let it out of sight (an assignment through it, `delete`, an argument, an alias, a
 * method call on it), or undefined when every reference only reads it. References are
 * found by name, following the names imports and re-exports give it, then confirmed
 * with the checker.
 */
function firstChange(ts: TypeScript, program: TS.Program, checker: TS.TypeChecker, target: TS.Symbol): TS.Node | undefined {
  const { files, byName } = identifiersOf(ts, program);

  const resolve = (node: TS.Identifier): TS.Symbol | undefined => {
    const symbol = ts.isShorthandPropertyAssignment(node.parent) && node.parent.name === node ? checker.getShorthandAssignmentValueSymbol(node.parent) : checker.getSymbolAtLocation(node);
    return symbol !== undefined && symbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol;
  };
  const references: TS.Identifier[] = [];
  const seen = new Set<TS.Identifier>();
  const pending = [target.name];
  const names = new Set(pending);
  while (pending.length > 0) {
    for (const node of byName.get(pending.pop()!) ?? []) {
      if (seen.has(node) || resolve(node) !== target) continue;
      seen.add(node);
      references.push(node);
      // An import or re-export under another name: look for that name too.
      const parent = node.parent;
      const local = ts.isImportSpecifier(parent) || ts.isExportSpecifier(parent) ? parent.name.text : undefined;
      if (local !== undefined && !names.has(local)) {
        names.add(local);
        pending.push(local);
      }
    }
  }
  const declarations = new Set((target.declarations ?? []).map((declaration) => (declaration as TS.NamedDeclaration).name));
  const changes = references.filter((node) => !declarations.has(node) && !onlyRead(ts, checker, node));
  changes.sort((a, b) => files.indexOf(a.getSourceFile()) - files.indexOf(b.getSourceFile()) || a.getStart() - b.getStart());
  return changes[0];
}

/** Calls that only look at an object: they neither change it nor return a part of it. */
const LOOKING = new Set(["Object.keys", "Object.hasOwn", "Object.isFrozen", "JSON.stringify"]);

function onlyRead(ts: TypeScript, checker: TS.TypeChecker, node: TS.Identifier): boolean {
  const { SyntaxKind } = ts;
  let parent = node.parent;
  if (ts.isImportSpecifier(parent) || ts.isExportSpecifier(parent) || ts.isImportClause(parent) || ts.isExportAssignment(parent)) return true;
  let at: TS.Node = node;
  while (ts.isQualifiedName(parent)) [at, parent] = [parent, parent.parent];
  if (ts.isTypeQueryNode(parent)) return true;
  // From the reference out through the reads of its parts (`policy.a.b`, `ns.policy`, `(policy as X)`).
  for (;;) {
    if (
      ts.isParenthesizedExpression(parent) || ts.isAsExpression(parent) || ts.isSatisfiesExpression(parent) || ts.isTypeAssertionExpression(parent) || ts.isNonNullExpression(parent) ||
      ((ts.isPropertyAccessExpression(parent) || ts.isElementAccessExpression(parent)) && (parent.expression === at || (ts.isPropertyAccessExpression(parent) && parent.name === at)))
    ) {
      [at, parent] = [parent, parent.parent];
      continue;
    }
    break;
  }
  if (ts.isExpressionStatement(parent) || ts.isTypeOfExpression(parent) || ts.isTemplateSpan(parent) || ts.isForInStatement(parent) || ts.isSwitchStatement(parent) || ts.isCaseClause(parent)) return true;
  if (ts.isIfStatement(parent) || ts.isWhileStatement(parent) || ts.isDoStatement(parent)) return parent.expression === at;
  if (ts.isConditionalExpression(parent)) return parent.condition === at;
  if (ts.isPrefixUnaryExpression(parent)) return [SyntaxKind.ExclamationToken, SyntaxKind.MinusToken, SyntaxKind.PlusToken, SyntaxKind.TildeToken].includes(parent.operator);
  if (
    ts.isBinaryExpression(parent) &&
    [
      SyntaxKind.EqualsEqualsEqualsToken, SyntaxKind.ExclamationEqualsEqualsToken, SyntaxKind.EqualsEqualsToken, SyntaxKind.ExclamationEqualsToken,
      SyntaxKind.LessThanToken, SyntaxKind.LessThanEqualsToken, SyntaxKind.GreaterThanToken, SyntaxKind.GreaterThanEqualsToken,
      SyntaxKind.InKeyword, SyntaxKind.InstanceOfKeyword,
    ].includes(parent.operatorToken.kind)
  ) {
    return true;
  }
  // A part that is a primitive can neither be changed nor alias the policy, wherever its value goes.
  const valueGoesOn =
    ts.isReturnStatement(parent) || ts.isArrowFunction(parent) || (ts.isVariableDeclaration(parent) && parent.initializer === at) ||
    ((ts.isCallExpression(parent) || ts.isNewExpression(parent)) && parent.expression !== at) ||
    (ts.isBinaryExpression(parent) && !(parent.operatorToken.kind >= SyntaxKind.FirstAssignment && parent.operatorToken.kind <= SyntaxKind.LastAssignment));
  if (at !== node && valueGoesOn && primitive(ts, checker.getTypeAtLocation(at))) return true;
  if (ts.isCallExpression(parent) && parent.expression !== at) {
    const callee = parent.expression.getText();
    // Object.freeze only makes later changes fail; what it returns is the policy itself.
    return LOOKING.has(callee) || (callee === "Object.freeze" && ts.isExpressionStatement(parent.parent));
  }
  return false;
}

function primitive(ts: TypeScript, type: TS.Type): boolean {
  const { TypeFlags } = ts;
  const flags = TypeFlags.StringLike | TypeFlags.NumberLike | TypeFlags.BooleanLike | TypeFlags.BigIntLike | TypeFlags.Undefined | TypeFlags.Null | TypeFlags.Void;
  return type.isUnion() ? type.types.every((member) => (member.flags & flags) !== 0) : (type.flags & flags) !== 0;
}

/** The types an entry's `input` and `output` validators declare (Standard Schema `~standard.types`). */
export interface SchemaTypes {
  /** What the browser may send: the `input` schema's input type. */
  readonly input?: TS.Type;
  /** What the browser gets: the `output` schema's output type. */
  readonly output?: TS.Type;
}

/**
 * `StandardSchemaV1.InferInput` of each entry's `input` and `InferOutput` of its `output`,
 * by method name, read with the checker from the policy literal (docs/guides/server-methods.md "Validating input
 * and output"): the schema is what the server enforces, so it wins over the parameter's
 * annotation. Entries that cannot be read, or whose validator declares no types, are left out.
 */
export function readSchemaTypes(ts: TypeScript, checker: TS.TypeChecker, policy: TS.Symbol | undefined): Map<string, SchemaTypes> {
  const found = new Map<string, SchemaTypes>();
  for (const [name, entry] of policyEntries(ts, checker, policy)) {
    const input = schemaType(ts, checker, entry, "input", "input");
    const output = schemaType(ts, checker, entry, "output", "output");
    if (input !== undefined || output !== undefined) found.set(name, { input, output });
  }
  return found;
}

function schemaType(ts: TypeScript, checker: TS.TypeChecker, entry: TS.Expression, key: "input" | "output", side: "input" | "output"): TS.Type | undefined {
  const schema = lookup(ts, checker, entry, key, 0);
  if (schema === undefined || schema === ABSENT || isNullish(ts, schema)) return undefined;
  let type = checker.getTypeAtLocation(schema);
  for (const name of ["~standard", "types"]) {
    const property = checker.getPropertyOfType(type, name);
    if (property === undefined) return undefined;
    type = checker.getNonNullableType(checker.getTypeOfSymbolAtLocation(property, schema));
  }
  const property = checker.getPropertyOfType(type, side);
  return property === undefined ? undefined : checker.getTypeOfSymbolAtLocation(property, schema);
}

/**
 * The codes each entry's `errors` declares (docs/guides/server-methods.md "Validating input and output", declared
 * errors), by method name: what `ctx.fail(code)` may answer besides the gateway's own. An
 * entry without `errors` declares none (an empty list); one whose `errors` cannot be read
 * in full (a spread or a key of no literal value) is left out, and its method's codes stay
 * open. Only for a policy read in full: the caller passes none otherwise.
 */
export function readDeclaredErrors(ts: TypeScript, checker: TS.TypeChecker, policy: TS.Symbol | undefined): Map<string, readonly string[]> {
  const found = new Map<string, readonly string[]>();
  for (const [name, entry] of policyEntries(ts, checker, policy)) {
    if (isNullish(ts, entry)) {
      found.set(name, []);
      continue;
    }
    const errors = lookup(ts, checker, entry, "errors", 0);
    if (errors === ABSENT || (errors !== undefined && isNullish(ts, errors))) found.set(name, []);
    else if (errors !== undefined) {
      const codes = keysOf(ts, checker, errors, 0);
      if (codes !== undefined) found.set(name, [...codes].sort());
    }
  }
  return found;
}

/** Each named entry of the policy's object literal with its value; none when it cannot be read. */
function* policyEntries(ts: TypeScript, checker: TS.TypeChecker, policy: TS.Symbol | undefined): Generator<[string, TS.Expression]> {
  if (policy === undefined) return;
  const literal = objectLiteralOf(ts, checker, initializerOf(ts, checker, policy), 0);
  if (literal === undefined) return;
  for (const property of literal.properties) {
    if (!ts.isPropertyAssignment(property) && !ts.isShorthandPropertyAssignment(property)) continue;
    const name = propertyNameOf(ts, checker, property.name);
    if (name !== undefined) yield [name, valueOf(ts, property)];
  }
}

/** The keys of an object literal (spreads followed), or undefined when one cannot be read. */
function keysOf(ts: TypeScript, checker: TS.TypeChecker, expression: TS.Expression, depth: number): Set<string> | undefined {
  const literal = objectLiteralOf(ts, checker, expression, depth);
  if (literal === undefined) return undefined;
  const keys = new Set<string>();
  for (const property of literal.properties) {
    const inner = ts.isSpreadAssignment(property) ? keysOf(ts, checker, property.expression, depth + 1) : undefined;
    const key = ts.isSpreadAssignment(property) ? undefined : propertyNameOf(ts, checker, property.name);
    if (inner !== undefined) for (const code of inner) keys.add(code);
    else if (key !== undefined) keys.add(key);
    else return undefined;
  }
  return keys;
}
