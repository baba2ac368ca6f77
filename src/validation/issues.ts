/**
 * A validator's issues as a client sees them (docs/guides/server-methods.md "Server methods"): at most 20, each
 * `{ path, message }` with `path` plain keys and indices, and never the value that was
 * checked. Libraries quote the received value in some messages (valibot: `Expected 8 but
 * received "hunter2"`; zod 3: `received 'x'`; arktype: `(was "x")`), and a secret typed
 * into the wrong field must not come back in the answer or the log: every rendering of the
 * value at the issue's path (and of the values inside it) becomes `[value]`.
 */
import type { StandardSchemaV1 } from "./standard-schema.js";

export interface PublicIssue {
  path: Array<string | number>;
  message: string;
}

export const MAX_ISSUES = 20;
/** How many values inside the one at an issue's path are masked: bounds the work a huge input can cause. */
const MAX_MASKED_VALUES = 200;
const MASK = "[value]";

export function publicIssues(issues: ReadonlyArray<StandardSchemaV1.Issue>, input: unknown): PublicIssue[] {
  const out: PublicIssue[] = [];
  const count = Math.min(issues.length, MAX_ISSUES);
  for (let index = 0; index < count; index += 1) {
    const issue = issues[index]!;
    const path = plainPath(issue.path);
    const message = typeof issue.message === "string" && issue.message !== "" ? issue.message : "Invalid input";
    out.push({ path, message: maskValues(message, valueAt(input, path)) });
  }
  return out;
}

function plainPath(path: StandardSchemaV1.Issue["path"]): Array<string | number> {
  if (!Array.isArray(path)) return [];
  return path.map((segment: PropertyKey | StandardSchemaV1.PathSegment) => {
    const key = typeof segment === "object" && segment !== null ? segment.key : segment;
    if (typeof key === "number") return key;
    if (typeof key === "symbol") return key.description ?? "";
    return String(key);
  });
}

/** The value an issue is about; own properties only, so a path naming `__proto__` finds nothing. */
function valueAt(input: unknown, path: ReadonlyArray<string | number>): unknown {
  let value = input;
  for (const key of path) {
    if (typeof value !== "object" || value === null || !Object.hasOwn(value, key)) return undefined;
    value = (value as Record<string | number, unknown>)[key];
  }
  return value;
}

function maskValues(message: string, value: unknown): string {
  // The usual bad input: one value of the wrong type, with nothing inside it to collect.
  if (typeof value !== "object" || value === null) return isLeaf(value) ? maskOne(message, value) : message;
  const leaves: Array<string | number | bigint | boolean> = [];
  collectLeaves(value, leaves);
  // Longest first, so that a value containing a shorter one is masked whole.
  leaves.sort((a, b) => String(b).length - String(a).length);
  let masked = message;
  for (const leaf of leaves) masked = maskOne(masked, leaf);
  return masked;
}

function collectLeaves(value: unknown, into: Array<string | number | bigint | boolean>): void {
  const stack = [value];
  while (stack.length > 0 && into.length < MAX_MASKED_VALUES) {
    const next = stack.pop();
    if (isLeaf(next)) into.push(next);
    else if (typeof next === "object" && next !== null) for (const key of Object.keys(next)) stack.push((next as Record<string, unknown>)[key]);
  }
}

function isLeaf(value: unknown): value is string | number | bigint | boolean {
  return typeof value === "string" || typeof value === "number" || typeof value === "bigint" || typeof value === "boolean";
}

function maskOne(message: string, leaf: string | number | bigint | boolean): string {
  const text = String(leaf);
  // Every rendering below contains the text itself: most messages name no value, and need
  // no pattern built (building one per value was most of a bad input's CPU time in a profile).
  if (text === "" || !message.includes(text)) return message;
  let masked = message;
  // Quoted, the way libraries render a string: always masked, however short.
  for (const quoted of [JSON.stringify(text), `'${text}'`, `\`${text}\``]) masked = masked.split(quoted).join(MASK);
  // Bare, as a number or an unquoted string is rendered: only as a whole word, and for
  // strings only from three characters on, so that `a` does not turn "a string" into
  // "[value] string" (a value that short is no secret).
  if (typeof leaf === "string" && text.length < 3) return masked;
  const bare = new RegExp(`(?<![\\w.-])${escapeRegExp(text)}(?![\\w])`, "g");
  return masked.replace(bare, MASK);
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}
