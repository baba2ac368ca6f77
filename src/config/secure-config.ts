/**
 * The two tiers of an item's secure config (docs/guides/server-methods.md "Secure config"): the author's
 * `<item>/server.json` under the deployer's `server.secure.plugins|modules.<id>`. Plain
 * data only, merged over own keys: a key that could reach a prototype (`__proto__`,
 * `constructor`, `prototype`) is dropped, and every result is a frozen copy, so that a
 * method can neither reach Object.prototype through it nor change what the next call sees.
 */

export type SecureBlock = Readonly<Record<string, unknown>>;

const UNSAFE_KEYS = new Set(["__proto__", "constructor", "prototype"]);
const EMPTY: SecureBlock = Object.freeze({});

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

/** A frozen deep copy of JSON-like data, unsafe keys dropped. */
export function frozenCopy(value: unknown): unknown {
  if (Array.isArray(value)) return Object.freeze(value.map(frozenCopy));
  if (!isPlainObject(value)) return value;
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(value)) {
    if (!UNSAFE_KEYS.has(key)) out[key] = frozenCopy(value[key]);
  }
  return Object.freeze(out);
}

/** The deployer's block over the author's: objects merge key by key, anything else (arrays too) replaces. */
export function mergeSecureTiers(author: unknown, deployer: unknown): SecureBlock {
  const merged = mergeInto(isPlainObject(author) ? author : {}, isPlainObject(deployer) ? deployer : {});
  return Object.keys(merged).length === 0 ? EMPTY : merged;
}

function mergeInto(author: Record<string, unknown>, deployer: Record<string, unknown>): SecureBlock {
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(author)) {
    if (!UNSAFE_KEYS.has(key)) out[key] = frozenCopy(author[key]);
  }
  for (const key of Object.keys(deployer)) {
    if (UNSAFE_KEYS.has(key)) continue;
    const mine = deployer[key];
    const theirs = Object.hasOwn(author, key) ? author[key] : undefined;
    out[key] = isPlainObject(mine) && isPlainObject(theirs) ? mergeInto(theirs, mine) : frozenCopy(mine);
  }
  return Object.freeze(out);
}

/** Own-property walk of a dotted path (empty segments dropped) or an array of keys. */
export function readPath(root: unknown, path: string | readonly string[]): unknown {
  const keys = typeof path === "string" ? path.split(".").filter((key) => key !== "") : path;
  let node: unknown = root;
  for (const key of keys) {
    if (node === null || typeof node !== "object" || !Object.hasOwn(node, key)) return undefined;
    node = (node as Record<string, unknown>)[key];
  }
  return node;
}

/** Keys whose string values are treated as secrets and masked in logs. */
const SECRET_KEY = /secret|token|password|passwd|api[-_]?key|credential|private/i;

/** String values under secret-looking keys, anywhere in a block. */
export function secretLookingValues(value: unknown, out: Set<string>, underSecretKey = false): void {
  if (typeof value === "string") {
    // Short values would mask common words all over the logs.
    if (underSecretKey && value.length >= 8) out.add(value);
    return;
  }
  if (Array.isArray(value)) {
    for (const item of value) secretLookingValues(item, out, underSecretKey);
    return;
  }
  if (isPlainObject(value)) {
    for (const [key, item] of Object.entries(value)) secretLookingValues(item, out, underSecretKey || SECRET_KEY.test(key));
  }
}

/**
 * `ctx.secure` of one plugin or module: its own merged block under `plugins` or `modules`
 * (any other id finds nothing), and the view of the verifier contexts.
 */
export interface ItemSecure {
  readonly plugins?: Readonly<Record<string, SecureBlock>>;
  readonly modules?: Readonly<Record<string, SecureBlock>>;
  readonly rpcVerifiers: Readonly<Record<string, unknown>>;
}

export function itemSecure(kind: "plugin" | "module" | "server", id: string, block: SecureBlock, rpcVerifiers: Readonly<Record<string, unknown>>): ItemSecure {
  if (kind === "server") return Object.freeze({ rpcVerifiers });
  // fromEntries defines an own property whatever the id (even "__proto__").
  const own = Object.freeze(Object.fromEntries([[id, block]])) as Readonly<Record<string, SecureBlock>>;
  return Object.freeze(kind === "plugin" ? { plugins: own, rpcVerifiers } : { modules: own, rpcVerifiers });
}
