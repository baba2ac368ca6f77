/**
 * `ctx.session` with its data (docs/guides/sessions-and-state.md): `{ id, createdAt, ...fields }`,
 * where `id` and `createdAt` are read-only and every other own field is data that is
 * saved when the call or route ends. What changed is found by comparing each field's JSON
 * text with the text it was loaded as, so a nested change (`ctx.session.tokens.a = …`)
 * is seen like a new field, and an unchanged session costs no write.
 */
import { errorOf } from "../errors/http-error.js";
import type { SessionChanges } from "./session-store.js";

/** The viewer's session as plugin code sees it. */
export interface SessionView {
  readonly id: string;
  /** Milliseconds since the epoch. */
  readonly createdAt: number;
  [field: string]: unknown;
}

const RESERVED: ReadonlySet<string> = new Set(["id", "createdAt"]);

/** A fresh view: the reserved fields, read-only, then each stored field parsed. */
export function sessionView(id: string, createdAt: number, fields: ReadonlyMap<string, string>): SessionView {
  const view = Object.defineProperties({} as SessionView, {
    id: { value: id, enumerable: true },
    createdAt: { value: createdAt, enumerable: true },
  });
  for (const [name, json] of fields) {
    if (RESERVED.has(name)) continue;
    // defineProperty, not assignment: a stored field named __proto__ stays a plain field.
    Object.defineProperty(view, name, { value: JSON.parse(json) as unknown, enumerable: true, writable: true, configurable: true });
  }
  return view;
}

/**
 * The view's fields as JSON text, by name. A field JSON cannot carry (a BigInt, a cycle)
 * throws a TypeError naming it; `undefined` (and what JSON leaves out) means "no field".
 */
export function fieldsOf(view: object): Map<string, string> {
  const out = new Map<string, string>();
  for (const name of Object.keys(view)) {
    if (RESERVED.has(name)) continue;
    let json: string | undefined;
    try {
      json = JSON.stringify((view as Record<string, unknown>)[name]);
    } catch (error) {
      throw new TypeError(`ctx.session.${name} cannot be saved: ${(error as Error).message}`);
    }
    if (json !== undefined) out.set(name, json);
  }
  return out;
}

/** What changed between the fields loaded and the fields now; null when nothing did. */
export function changesBetween(loaded: ReadonlyMap<string, string>, now: ReadonlyMap<string, string>): SessionChanges | null {
  const set: Array<[string, string]> = [];
  const deleted: string[] = [];
  for (const [name, json] of now) if (loaded.get(name) !== json) set.push([name, json]);
  for (const name of loaded.keys()) if (!now.has(name)) deleted.push(name);
  return set.length === 0 && deleted.length === 0 ? null : { set, deleted };
}

/**
 * The view of a call whose session data could not be loaded (the store is down): `id` and
 * `createdAt` still read, and anything else (reading, writing or listing a field) throws
 * 503 SESSION_STORE_UNAVAILABLE, so only calls that use the data fail.
 */
export function unavailableSessionView(id: string, createdAt: number, refusal: () => Error = () => errorOf("SESSION_STORE_UNAVAILABLE")): SessionView {
  const refuse = (): never => {
    throw refusal();
  };
  const base = { id, createdAt };
  return new Proxy(base as SessionView, {
    get(_target, key) {
      if (key === "id") return id;
      if (key === "createdAt") return createdAt;
      // Asked by `await`, JSON.stringify and inspection without meaning to read data.
      if (typeof key === "symbol" || key === "then" || key === "toJSON") return undefined;
      return refuse();
    },
    has: (_target, key) => (key === "id" || key === "createdAt" ? true : refuse()),
    ownKeys: refuse,
    // The read-only fields stay read-only (a TypeError in strict code), as in a working session.
    set: (_target, key) => (key === "id" || key === "createdAt" ? false : refuse()),
    deleteProperty: (_target, key) => (key === "id" || key === "createdAt" ? false : refuse()),
    defineProperty: (_target, key) => (key === "id" || key === "createdAt" ? false : refuse()),
    getOwnPropertyDescriptor: (_target, key) => (key === "id" || key === "createdAt" ? Reflect.getOwnPropertyDescriptor(base, key) : refuse()),
  });
}
