/**
 * Writes a checker type as self-contained TypeScript text for `counterpart types`, as the
 * browser sees the value after JSON (docs/guides/toolkit.md "Typed calls: counterpart types" lists the
 * rules). Two directions:
 *
 * - "output" (results, events): what `JSON.stringify` on the server makes of a value of
 *   the type. A `toJSON()` becomes its return type (Date → string); `undefined`, functions
 *   and symbols vanish (a property is left out or becomes optional, an array element or a
 *   whole answer becomes `null`); `bigint` makes the answer fail, so it is `never`.
 * - "input": what the browser may send so that the method gets the type it declares. A
 *   part JSON cannot carry (a Date, a function, a class instance with methods) is `unknown`.
 *
 * Types declared in the app's own files become named declarations, written once (so that
 * recursive types terminate); those of the standard library and of packages are expanded
 * in place. Anything this cannot write faithfully is `unknown`, never a guess.
 */
import type * as TS from "typescript";
import type { TypeScript } from "./load-typescript.js";
import type { TypeFacts } from "./types-facts.js";

export type Direction = "input" | "output";

/** A named declaration: `type <name> = <body>`, with references still as placeholders. */
export interface NamedType {
  readonly index: number;
  readonly type: TS.Type;
  readonly direction: Direction;
  readonly baseName: string;
  body: string;
  /** An object's members, for writing one a line. */
  members: string[] | undefined;
}

/** A reference to a named declaration, resolved to its final name once all are known. */
export const reference = (index: number): string => `\u0001${index}\u0001`;
export const REFERENCE = /\u0001(\d+)\u0001/g;

interface Written {
  text: string;
  /** A union or intersection: wrapped before `[]`. */
  compound: boolean;
}

const UNKNOWN: Written = { text: "unknown", compound: false };
const NEVER: Written = { text: "never", compound: false };
const NULL: Written = { text: "null", compound: false };
const UNDEFINED: Written = { text: "undefined", compound: false };

/** Past this depth of types expanded in place, the rest is `unknown`: a package's types may nest without end. */
const MAX_DEPTH = 24;

export class JsonTypeWriter {
  readonly #ts: TypeScript;
  readonly #checker: TS.TypeChecker;
  readonly #facts: TypeFacts;
  /** Shared by the writers of every program of one run, so that indexes are unique. */
  readonly #named: NamedType[];
  readonly #namedIndex = new Map<TS.Type, Map<Direction, NamedType>>();
  /** Types being expanded in place: meeting one again inside itself is a cycle. */
  readonly #expanding = new Set<TS.Type>();

  constructor(ts: TypeScript, checker: TS.TypeChecker, facts: TypeFacts, named: NamedType[]) {
    this.#ts = ts;
    this.#checker = checker;
    this.#facts = facts;
    this.#named = named;
  }

  /** The type of a whole value: an input, a result or an event. */
  write(type: TS.Type, direction: Direction): string {
    return this.#write(type, direction, 0).text;
  }

  /** A union's members without `undefined` and `void`, written: for an optional input. */
  writeDefined(type: TS.Type, direction: Direction): string {
    const members = type.isUnion() ? type.types : [type];
    return this.#union(members.filter((member) => !(member.flags & this.#ts.TypeFlags.VoidLike)), direction, 0).text;
  }

  #write(type: TS.Type, direction: Direction, depth: number): Written {
    const { TypeFlags } = this.#ts;
    const flags = type.flags;
    if (flags & (TypeFlags.Any | TypeFlags.Unknown)) return UNKNOWN;
    if (flags & TypeFlags.Never) return NEVER;
    if (direction === "output" && this.#facts.vanishes(type)) return NULL;
    if (flags & TypeFlags.VoidLike) return UNDEFINED;
    if (flags & TypeFlags.Null) return NULL;
    // JSON.stringify throws on a bigint: an answer or event holding one never arrives,
    // and the browser cannot send one.
    if (flags & TypeFlags.BigIntLike) return NEVER;
    if (flags & TypeFlags.ESSymbolLike) return UNKNOWN;
    if (flags & TypeFlags.Boolean) return atom("boolean");
    if (flags & TypeFlags.BooleanLiteral) return atom(this.#checker.typeToString(type));
    if (type.isStringLiteral()) return atom(JSON.stringify(type.value));
    if (type.isNumberLiteral()) return atom(String(type.value));
    if (flags & (TypeFlags.String | TypeFlags.StringMapping)) return atom("string");
    if (flags & TypeFlags.Number) return atom("number");
    if (flags & TypeFlags.TemplateLiteral) return this.#template(type as TS.TemplateLiteralType, direction, depth);
    if (flags & TypeFlags.NonPrimitive) return atom("object");
    if (flags & (TypeFlags.TypeParameter | TypeFlags.Index | TypeFlags.IndexedAccess | TypeFlags.Conditional | TypeFlags.Substitution)) {
      // A generic method's type parameter is whatever the caller's JSON is, within its
      // constraint: the constraint is a faithful bound both ways.
      const constraint = this.#checker.getBaseConstraintOfType(type);
      return constraint === undefined || constraint === type ? UNKNOWN : this.#write(constraint, direction, depth + 1);
    }
    if (flags & TypeFlags.Union) {
      const named = this.#namedReference(type, direction);
      return named ?? this.#guarded(type, depth, () => this.#union((type as TS.UnionType).types, direction, depth + 1));
    }
    if (flags & (TypeFlags.Object | TypeFlags.Intersection)) return this.#structured(type, direction, depth);
    return UNKNOWN;
  }

  #union(members: readonly TS.Type[], direction: Direction, depth: number): Written {
    let texts: string[] = [];
    for (const member of members) {
      const written = this.#write(member, direction, depth);
      if (written === UNKNOWN) return UNKNOWN;
      if (written === NEVER) continue;
      if (!texts.includes(written.text)) texts.push(written.text);
    }
    // The checker splits `boolean` into its two literals; put it back together.
    if (texts.includes("true") && texts.includes("false")) {
      texts = texts.filter((text) => text !== "false").map((text) => (text === "true" ? "boolean" : text));
    }
    if (texts.length === 0) return NEVER;
    // The checker orders members by when it met them; the empty values read better last.
    texts = [...texts.filter((text) => text !== "null" && text !== "undefined"), ...texts.filter((text) => text === "null" || text === "undefined")];
    return texts.length === 1 ? atom(texts[0]!) : { text: texts.join(" | "), compound: true };
  }

  /**
   * docs/guides/files.md: the browser sends a `Blob` (or `File`) where a method
   * takes an `UploadedFile`, and receives a `Blob` where it returns `APP_SERVER.file(…)`.
   * Known by the package's own declarations, not by a name an app could reuse.
   */
  #fileType(type: TS.Type, direction: Direction): Written | undefined {
    const symbol = type.getSymbol();
    const name = symbol?.getName();
    if (name !== "UploadedFile" && name !== "FileResult") return undefined;
    const declared = symbol?.getDeclarations()?.[0]?.getSourceFile().fileName ?? "";
    const ours = name === "UploadedFile" ? /[\\/]runtime[\\/]uploaded-file\.(?:d\.)?ts$/ : /[\\/]plugin-api[\\/]file-result\.(?:d\.)?ts$/;
    if (!ours.test(declared)) return undefined;
    if (name === "UploadedFile") return direction === "input" ? atom("Blob") : undefined;
    return direction === "output" ? atom("Blob") : NEVER;
  }

  #template(type: TS.TemplateLiteralType, direction: Direction, depth: number): Written {
    let text = "`" + escapeTemplate(type.texts[0] ?? "");
    for (const [index, part] of type.types.entries()) {
      const written = this.#write(part, direction, depth + 1);
      if (written === UNKNOWN || written === NEVER) return atom("string");
      text += "${" + written.text + "}" + escapeTemplate(type.texts[index + 1] ?? "");
    }
    return atom(text + "`");
  }

  /** Objects, arrays, tuples and intersections. */
  #structured(type: TS.Type, direction: Direction, depth: number): Written {
    const { TypeFlags } = this.#ts;
    const file = this.#fileType(type, direction);
    if (file) return file;
    if (type.flags & TypeFlags.Intersection) {
      const members = (type as TS.IntersectionType).types;
      // A branded primitive (`string & { __brand: "id" }`): each part as it is.
      if (!members.every((member) => member.flags & TypeFlags.Object)) {
        const texts: string[] = [];
        for (const member of members) {
          const written = this.#write(member, direction, depth + 1);
          if (written === NEVER) return NEVER;
          if (written !== UNKNOWN) texts.push(written.compound ? `(${written.text})` : written.text);
        }
        return texts.length === 0 ? UNKNOWN : texts.length === 1 ? atom(texts[0]!) : { text: texts.join(" & "), compound: true };
      }
    }
    const element = this.#facts.arrayElement(type);
    if (element !== undefined) {
      const written = this.#element(element.type, direction, depth + 1);
      // An element JSON drops is written as null: the union already says so.
      return atom(element.readonly ? `ReadonlyArray<${written.text}>` : written.compound ? `Array<${written.text}>` : `${written.text}[]`);
    }
    if (this.#facts.isTuple(type)) return this.#tuple(type as TS.TypeReference, direction, depth);
    if (type.getCallSignatures().length > 0 || type.getConstructSignatures().length > 0) return UNKNOWN;
    const toJSON = this.#facts.toJSON(type);
    if (toJSON !== undefined) return direction === "output" ? this.#write(toJSON, direction, depth + 1) : UNKNOWN;
    if (this.#facts.opaque(type)) return UNKNOWN;
    // The browser may send such a class's fields as declared: it is the result that no declaration describes.
    if (direction === "output" && this.#facts.extendsOpaque(type)) return UNKNOWN;
    const named = this.#namedReference(type, direction);
    if (named !== undefined) return named;
    return this.#guarded(type, depth, () => this.#objectLiteral(type, direction, depth + 1));
  }

  /** Expands `type` in place unless it is already being expanded (a cycle) or too deep. */
  #guarded(type: TS.Type, depth: number, expand: () => Written): Written {
    if (this.#expanding.has(type) || depth > MAX_DEPTH) return UNKNOWN;
    this.#expanding.add(type);
    try {
      return expand();
    } finally {
      this.#expanding.delete(type);
    }
  }

  #objectLiteral(type: TS.Type, direction: Direction, depth: number): Written {
    const members = this.#members(type, direction, depth);
    return atom(members.length === 0 ? "{}" : `{ ${members.join("; ")} }`);
  }

  #members(type: TS.Type, direction: Direction, depth: number): string[] {
    const { SymbolFlags, TypeFlags } = this.#ts;
    const members: string[] = [];
    for (const property of this.#checker.getPropertiesOfType(type)) {
      // Symbol keys and #private fields are not properties JSON sees.
      if (property.escapedName.toString().startsWith("__@") || property.escapedName.toString().startsWith("__#")) continue;
      if (direction === "output" && this.#facts.onPrototype(property)) continue;
      const propertyType = this.#facts.typeOfSymbol(property);
      let optional = (property.flags & SymbolFlags.Optional) !== 0;
      let kept: readonly TS.Type[] = propertyType.isUnion() ? propertyType.types : [propertyType];
      const all = kept.length;
      kept = kept.filter((member) => (direction === "output" ? !this.#facts.vanishes(member) : !(optional && member.flags & TypeFlags.VoidLike)));
      if (direction === "output" && kept.length < all) optional = true;
      if (kept.length === 0 && all > 0 && direction === "output") continue;
      let written = kept.length === all ? this.#write(propertyType, direction, depth) : this.#union(kept, direction, depth);
      // A property the browser cannot send (a method, a Date) is whatever it sends, if anything.
      if (direction === "input" && written === UNKNOWN && kept.some((member) => this.#facts.vanishes(member))) optional = true;
      if (written === NEVER && optional) continue;
      members.push(`${this.#facts.isReadonly(property) ? "readonly " : ""}${propertyName(property.name)}${optional ? "?" : ""}: ${written.text}`);
    }
    for (const info of this.#checker.getIndexInfosOfType(type)) {
      if (info.keyType.flags & TypeFlags.ESSymbolLike) continue;
      const key = info.keyType.flags & TypeFlags.Number ? "number" : "string";
      const value = info.type.isUnion() ? info.type.types : [info.type];
      // An index signature's values may be missing anyway: what JSON drops goes unsaid.
      const kept = value.filter((member) => (direction === "output" ? !this.#facts.vanishes(member) : !(member.flags & TypeFlags.VoidLike)));
      if (kept.length === 0) continue;
      // The whole type when nothing was dropped, so that a named union stays named.
      const written = kept.length === value.length ? this.#write(info.type, direction, depth) : this.#union(kept, direction, depth);
      members.push(`${info.isReadonly ? "readonly " : ""}[key: ${key}]: ${written.text}`);
    }
    return members;
  }

  #tuple(type: TS.TypeReference, direction: Direction, depth: number): Written {
    const { ElementFlags } = this.#ts;
    const target = type.target as TS.TupleType;
    const parts = this.#checker.getTypeArguments(type).map((element, index) => {
      const flags = target.elementFlags[index] ?? ElementFlags.Required;
      const written = this.#element(element, direction, depth + 1);
      if (flags & ElementFlags.Variadic) return UNKNOWN.text;
      if (flags & ElementFlags.Rest) return `...${written.compound ? `Array<${written.text}>` : `${written.text}[]`}`;
      // An explicit `undefined` is in the element's type, and comes out as null.
      if (flags & ElementFlags.Optional) return written.compound ? `(${written.text})?` : `${written.text}?`;
      return written.text;
    });
    return atom(`${target.readonly ? "readonly " : ""}[${parts.join(", ")}]`);
  }

  /**
   * An array or tuple element. The browser's JSON.stringify sends an `undefined` element
   * as `null`, which the method did not declare, so an input's elements leave it out (an
   * optional tuple element is still optional: it may be left off the end).
   */
  #element(type: TS.Type, direction: Direction, depth: number): Written {
    if (direction === "output") return this.#write(type, direction, depth);
    const members = type.isUnion() ? type.types : [type];
    const defined = members.filter((member) => !(member.flags & this.#ts.TypeFlags.VoidLike));
    return defined.length === members.length ? this.#write(type, direction, depth) : this.#union(defined, direction, depth);
  }

  /**
   * A reference to the named declaration of an app type: an interface, a class, or a type
   * alias of an object or a union. Output unions that hold a vanishing member are left in
   * place, since what becomes of that member depends on where the union stands.
   */
  #namedReference(type: TS.Type, direction: Direction): Written | undefined {
    const symbol = type.aliasSymbol ?? type.getSymbol();
    if (symbol === undefined || !this.#facts.declaredInApp(symbol)) return undefined;
    if (type.aliasSymbol === undefined) {
      const objectFlags = type.flags & this.#ts.TypeFlags.Object ? (type as TS.ObjectType).objectFlags : 0;
      const declared = objectFlags & this.#ts.ObjectFlags.Reference ? (type as TS.TypeReference).target.objectFlags : objectFlags;
      if (!(declared & (this.#ts.ObjectFlags.Interface | this.#ts.ObjectFlags.Class))) return undefined;
    }
    if (type.isUnion() && (symbol.flags & this.#ts.SymbolFlags.Enum || (direction === "output" && type.types.some((member) => this.#facts.vanishes(member))))) {
      return undefined;
    }
    let byDirection = this.#namedIndex.get(type);
    if (byDirection === undefined) this.#namedIndex.set(type, (byDirection = new Map()));
    let named = byDirection.get(direction);
    if (named === undefined) {
      named = { index: this.#named.length, type, direction, baseName: symbol.name, body: "unknown", members: undefined };
      byDirection.set(direction, named);
      this.#named.push(named);
      // Written after it is registered: a reference to itself inside finds it.
      if (type.isUnion()) {
        named.body = this.#union(type.types, direction, 0).text;
      } else {
        named.members = this.#members(type, direction, 0);
        named.body = named.members.length === 0 ? "{}" : `{ ${named.members.join("; ")} }`;
      }
    }
    return atom(reference(named.index));
  }

}

function atom(text: string): Written {
  return { text, compound: false };
}

function escapeTemplate(text: string): string {
  return text.replace(/[`\\]|\$\{/g, (match) => "\\" + match);
}

/** A property name as it may be written in a type literal. */
export function propertyName(name: string): string {
  return /^[A-Za-z_$][\w$]*$/.test(name) ? name : JSON.stringify(name);
}
