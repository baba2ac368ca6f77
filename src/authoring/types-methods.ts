/**
 * The methods one server file serves, as `counterpart types` sees them through the
 * checker: the names the server would take (docs/guides/server-methods.md "Server methods": every function
 * export but `policy`, or only the policy's names with `server.rpc.expose: "policy"` and
 * in a boot hook) and, for a `.ts` file, what the browser sends and gets back. A `.js` or
 * `.mjs` file is listed but typed `unknown`: its types are inferred, not declared.
 */
import { extname } from "node:path";
import type * as TS from "typescript";
import type { TypeScript } from "./load-typescript.js";
import { readDeclaredErrors, readPolicy, readSchemaTypes, type PolicyReading, type SchemaTypes } from "./types-policy.js";
import type { JsonTypeWriter } from "./types-json.js";

export interface MethodShape {
  readonly name: string;
  readonly file: string;
  /** Undefined: the policy could not be read, so either call may be right. */
  readonly streaming: boolean | undefined;
  /** Undefined: the method takes no input. */
  readonly input: { readonly text: string; readonly optional: boolean } | undefined;
  readonly result: string;
  readonly events: string;
  /** The codes its policy declares (`errors`); undefined when they cannot be read, so any code goes. */
  readonly errors: readonly string[] | undefined;
  /** Why the method is typed `unknown`, when it is: typing needs a `.ts` file's one declared call signature. */
  readonly untyped: string | undefined;
}

export interface FileMethods {
  readonly methods: MethodShape[];
  readonly warnings: string[];
}

const UNTYPED_INPUT = { text: "unknown", optional: true } as const;

export function readFileMethods(
  ts: TypeScript,
  program: TS.Program,
  writer: JsonTypeWriter,
  source: TS.SourceFile,
  options: { policyOnly: boolean; bootHook: boolean; label: string; labelOf: (fileName: string) => string },
): FileMethods {
  const checker = program.getTypeChecker();
  const warnings: string[] = [];
  const module = checker.getSymbolAtLocation(source);
  // A file with no import or export is a script, not a module: it exports nothing.
  const exports = module === undefined ? [] : checker.getExportsOfModule(module);
  const policySymbol = exports.find((symbol) => symbol.name === "policy");
  const policy: PolicyReading = readPolicy(ts, program, checker, policySymbol);
  const policyOnly = options.policyOnly || options.bootHook;
  if (policySymbol !== undefined && !policy.complete) {
    const at = policy.changedAt;
    const where = at === undefined ? "" : `${options.labelOf(at.getSourceFile().fileName)}:${at.getSourceFile().getLineAndCharacterOfPosition(at.getStart()).line + 1}`;
    const unread = `${options.label}: the policy export cannot be read in full (${at === undefined ? "not an object literal with plain keys" : `changed or passed on at ${where}`})`;
    warnings.push(policyOnly ? `${unread}: every exported function is typed as a method` : `${unread}: the methods it may name are typed both as plain and as $stream calls`);
  }
  // Only a policy read in full: one changed after its literal may not hold these schemas.
  const schemas = policy.complete ? readSchemaTypes(ts, checker, policySymbol) : new Map<string, SchemaTypes>();
  const declared = policy.complete ? readDeclaredErrors(ts, checker, policySymbol) : undefined;
  const typedFile = [".ts", ".mts", ".cts"].includes(extname(source.fileName));
  const methods: MethodShape[] = [];
  for (const symbol of exports) {
    const name = symbol.name;
    if (name === "default" || name === "policy") continue;
    if (options.bootHook && name === "register") continue;
    const target = symbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol;
    if (!(target.flags & ts.SymbolFlags.Value)) continue;
    const type = checker.getTypeOfSymbolAtLocation(target, source);
    const callable = type.getCallSignatures().length > 0 || (type.flags & ts.TypeFlags.Any) !== 0;
    if (!callable) continue;
    if (policyOnly && policy.complete && !policy.entries.has(name)) continue;
    const streaming = policy.entries.has(name) ? policy.entries.get(name) : policy.complete ? false : undefined;
    // A method the policy does not list declares no codes; one whose entry cannot be read may answer any.
    const errors = declared === undefined ? undefined : declared.has(name) ? declared.get(name) : policy.entries.has(name) ? undefined : [];
    const base = { name, file: source.fileName, streaming, errors };
    const signatures = type.getCallSignatures();
    const untyped = !typedFile ? "a JavaScript file" : signatures.length === 0 ? "its type is any" : signatures.length > 1 ? "several signatures" : undefined;
    if (untyped !== undefined) {
      methods.push({ ...base, input: UNTYPED_INPUT, result: "unknown", events: "unknown", untyped });
      continue;
    }
    const shape = describeSignature(ts, checker, writer, signatures[0]!, source);
    // What the policy's validators declare wins over the signature: it is what the server enforces.
    const schema = schemas.get(name);
    if (schema?.input !== undefined) shape.input = describeInput(ts, checker, writer, undefined, schema.input);
    if (schema?.output !== undefined) shape.result = writer.write(schema.output, "output");
    methods.push({ ...base, ...shape, untyped });
  }
  return { methods, warnings };
}

/** A method is called `fn(ctx, ...args)` and the browser sends one input: `args[0]`. */
function describeSignature(
  ts: TypeScript,
  checker: TS.TypeChecker,
  writer: JsonTypeWriter,
  signature: TS.Signature,
  source: TS.SourceFile,
): { input: MethodShape["input"]; result: string; events: string } {
  const [ctx, input] = signature.getParameters();
  const typeOf = (symbol: TS.Symbol): TS.Type => checker.getTypeOfSymbolAtLocation(symbol, symbol.valueDeclaration ?? source);
  const isRest = (symbol: TS.Symbol): boolean => {
    const declaration = symbol.valueDeclaration;
    return declaration !== undefined && ts.isParameter(declaration) && declaration.dotDotDotToken !== undefined;
  };
  const returned = signature.getReturnType();
  const result = writer.write(checker.getAwaitedType(returned) ?? returned, "output");
  // `(...args)` takes ctx and the input as one array: nothing to read them from.
  if (ctx !== undefined && isRest(ctx)) return { input: UNTYPED_INPUT, result, events: "unknown" };
  const events = ctx === undefined ? "unknown" : eventsOf(checker, writer, typeOf(ctx), source);
  if (input === undefined) return { input: undefined, result, events };
  return { input: isRest(input) ? UNTYPED_INPUT : describeInput(ts, checker, writer, input, typeOf(input)), result, events };
}

function describeInput(ts: TypeScript, checker: TS.TypeChecker, writer: JsonTypeWriter, parameter: TS.Symbol | undefined, type: TS.Type) {
  const declaration = parameter?.valueDeclaration;
  const declaredOptional = declaration !== undefined && ts.isParameter(declaration) && checker.isOptionalParameter(declaration);
  const acceptsUndefined =
    (type.flags & (ts.TypeFlags.Any | ts.TypeFlags.Unknown | ts.TypeFlags.VoidLike)) !== 0 ||
    (type.isUnion() && type.types.some((member) => member.flags & ts.TypeFlags.VoidLike));
  const optional = declaredOptional || acceptsUndefined;
  const text = optional ? writer.writeDefined(type, "input") : writer.write(type, "input");
  return { text, optional: optional || text === "unknown" };
}

/** `Event` of `RpcContext<Config, Event>`, read from what `ctx.emit` takes, so any ctx type that has an `emit` works. */
function eventsOf(checker: TS.TypeChecker, writer: JsonTypeWriter, ctx: TS.Type, source: TS.SourceFile): string {
  const emit = checker.getPropertyOfType(ctx, "emit");
  if (emit === undefined) return "unknown";
  const signatures = checker.getTypeOfSymbolAtLocation(emit, emit.valueDeclaration ?? source).getCallSignatures();
  const value = signatures.length === 1 ? signatures[0]!.getParameters()[0] : undefined;
  if (value === undefined) return "unknown";
  return writer.write(checker.getTypeOfSymbolAtLocation(value, value.valueDeclaration ?? source), "output");
}
