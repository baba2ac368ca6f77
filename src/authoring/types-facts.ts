/**
 * What `counterpart types` asks of a checker type before writing it (types-json.ts): is it
 * gone from JSON, an array, a tuple, a class of a library, where was it declared. Kept
 * apart from the writer so that each reads as one job.
 */
import type * as TS from "typescript";
import type { TypeScript } from "./load-typescript.js";

/** The checker's internal `CheckFlags` that `isReadonly` reads (stable since TypeScript 3). */
const CHECK_READONLY = 8;
const CHECK_SYNTHETIC = 6;
const CHECK_MAPPED = 262_144;

/** Where a declaration comes from. */
export interface FileKinds {
  /** The app's own files: their types become named declarations. */
  isApp(file: TS.SourceFile): boolean;
  /** The standard library (lib.*.d.ts). */
  isLibrary(file: TS.SourceFile): boolean;
}

export class TypeFacts {
  readonly #ts: TypeScript;
  readonly #checker: TS.TypeChecker;
  readonly #files: FileKinds;
  /** Where the type of a symbol without a declaration is asked for: the current server file. */
  location: TS.Node | undefined;

  constructor(ts: TypeScript, checker: TS.TypeChecker, files: FileKinds) {
    this.#ts = ts;
    this.#checker = checker;
    this.#files = files;
  }

  /** Gone from JSON output: `undefined`, functions and symbols. */
  vanishes(type: TS.Type): boolean {
    const { TypeFlags } = this.#ts;
    if (type.flags & (TypeFlags.VoidLike | TypeFlags.ESSymbolLike)) return true;
    if (!(type.flags & (TypeFlags.Object | TypeFlags.Intersection))) return false;
    if (type.getCallSignatures().length > 0 || type.getConstructSignatures().length > 0) return true;
    // `Function` has no call signature of its own, but its values are functions.
    const symbol = type.getSymbol();
    return symbol !== undefined && ["Function", "CallableFunction", "NewableFunction"].includes(symbol.name) && this.fromLibrary(symbol);
  }

  typeOfSymbol(symbol: TS.Symbol): TS.Type {
    const at = symbol.valueDeclaration ?? symbol.declarations?.[0] ?? this.location;
    // A declaration node asks for the symbol's own type (an instantiated one included), with no narrowing.
    return at === undefined ? this.#checker.getTypeOfSymbol(symbol) : this.#checker.getTypeOfSymbolAtLocation(symbol, at);
  }

  /** The return type of a `toJSON()` method, which JSON.stringify calls instead of walking the object. */
  toJSON(type: TS.Type): TS.Type | undefined {
    const method = this.#checker.getPropertyOfType(type, "toJSON");
    if (method === undefined) return undefined;
    const signatures = this.typeOfSymbol(method).getCallSignatures();
    if (signatures.length === 0) return undefined;
    return signatures.length === 1 ? signatures[0]!.getReturnType() : this.#checker.getAnyType();
  }

  /**
   * A class instance of the standard library or a package (Map, Error, a typed array, a
   * client object): JSON sees its own fields, not what its declaration describes.
   */
  opaque(type: TS.Type): boolean {
    const { ObjectFlags } = this.#ts;
    const symbol = type.getSymbol();
    if (symbol === undefined || !(type.flags & this.#ts.TypeFlags.Object)) return false;
    const objectFlags = (type as TS.ObjectType).objectFlags;
    const declared = objectFlags & ObjectFlags.Reference ? ((type as TS.TypeReference).target.objectFlags) : objectFlags;
    if (!(declared & (ObjectFlags.Class | ObjectFlags.Interface))) return false;
    if (this.fromLibrary(symbol)) return true;
    if (!this.fromPackage(symbol)) return false;
    return declared & ObjectFlags.Class ? true : this.#checker.getPropertiesOfType(type).some((property) => property.flags & this.#ts.SymbolFlags.Method);
  }

  /**
   * A class that extends an opaque one (`class AppError extends Error`, `extends Map`):
   * what JSON sees of it depends on what the base's constructor sets and how (an Error's
   * `message` and `stack` are own but not enumerable, an Array subclass is an array),
   * which no declaration says. An interface that extends one is a promise about a shape,
   * and is taken at its word.
   */
  extendsOpaque(type: TS.Type): boolean {
    const { ObjectFlags, TypeFlags } = this.#ts;
    if (!(type.flags & TypeFlags.Object)) return false;
    const objectFlags = (type as TS.ObjectType).objectFlags;
    const declared = objectFlags & ObjectFlags.Reference ? (type as TS.TypeReference).target : (type as TS.ObjectType);
    if (!(declared.objectFlags & ObjectFlags.Class)) return false;
    const seen = new Set<TS.Type>();
    const walk = (current: TS.InterfaceType): boolean => {
      if (seen.has(current)) return false;
      seen.add(current);
      return this.#checker.getBaseTypes(current).some((base) => {
        if (this.opaque(base)) return true;
        const target = base.flags & TypeFlags.Object && (base as TS.ObjectType).objectFlags & ObjectFlags.Reference ? (base as TS.TypeReference).target : base;
        return target.flags & TypeFlags.Object && (target as TS.ObjectType).objectFlags & ObjectFlags.ClassOrInterface ? walk(target as TS.InterfaceType) : false;
      });
    };
    return walk(declared as TS.InterfaceType);
  }

  /** Class methods and accessors live on the prototype, which JSON.stringify does not walk. */
  onPrototype(property: TS.Symbol): boolean {
    const { SyntaxKind } = this.#ts;
    const declarations = property.declarations ?? [];
    return (
      declarations.length > 0 &&
      declarations.every(
        (declaration) =>
          [SyntaxKind.MethodDeclaration, SyntaxKind.GetAccessor, SyntaxKind.SetAccessor].includes(declaration.kind) &&
          (this.#ts.isClassDeclaration(declaration.parent) || this.#ts.isClassExpression(declaration.parent)),
      )
    );
  }

  /**
   * Readonly is only what the author wrote: assignability ignores it. A mapped property
   * (`Partial<T>`, `Readonly<T>`) or one merged from an intersection carries it in the
   * checker's `checkFlags`, which the public API does not expose; read defensively, it is
   * left out when missing rather than guessed from a declaration a `-readonly` may undo.
   */
  isReadonly(property: TS.Symbol): boolean {
    const { ModifierFlags, SymbolFlags } = this.#ts;
    if (property.flags & SymbolFlags.Transient) {
      const checkFlags = (property as TS.Symbol & { links?: { checkFlags?: unknown } }).links?.checkFlags;
      if (typeof checkFlags === "number" && checkFlags & (CHECK_MAPPED | CHECK_SYNTHETIC)) return (checkFlags & CHECK_READONLY) !== 0;
    }
    if (property.flags & SymbolFlags.GetAccessor && !(property.flags & SymbolFlags.SetAccessor)) return true;
    const declaration = property.valueDeclaration;
    return declaration !== undefined && (this.#ts.getCombinedModifierFlags(declaration) & ModifierFlags.Readonly) !== 0;
  }

  arrayElement(type: TS.Type): { type: TS.Type; readonly: boolean } | undefined {
    if (!(type.flags & this.#ts.TypeFlags.Object) || !((type as TS.ObjectType).objectFlags & this.#ts.ObjectFlags.Reference)) return undefined;
    const symbol = (type as TS.TypeReference).target.getSymbol();
    if (symbol === undefined || !["Array", "ReadonlyArray"].includes(symbol.name) || !this.fromLibrary(symbol)) return undefined;
    const [element] = this.#checker.getTypeArguments(type as TS.TypeReference);
    return element === undefined ? undefined : { type: element, readonly: symbol.name === "ReadonlyArray" };
  }

  isTuple(type: TS.Type): boolean {
    const { ObjectFlags, TypeFlags } = this.#ts;
    return (
      (type.flags & TypeFlags.Object) !== 0 &&
      ((type as TS.ObjectType).objectFlags & ObjectFlags.Reference) !== 0 &&
      ((type as TS.TypeReference).target.objectFlags & ObjectFlags.Tuple) !== 0
    );
  }

  declaredInApp(symbol: TS.Symbol): boolean {
    const declarations = symbol.declarations ?? [];
    return declarations.length > 0 && declarations.every((declaration) => this.#files.isApp(declaration.getSourceFile()));
  }

  fromLibrary(symbol: TS.Symbol): boolean {
    return (symbol.declarations ?? []).some((declaration) => this.#files.isLibrary(declaration.getSourceFile()));
  }

  fromPackage(symbol: TS.Symbol): boolean {
    return (symbol.declarations ?? []).some((declaration) => !this.#files.isApp(declaration.getSourceFile()));
  }
}
