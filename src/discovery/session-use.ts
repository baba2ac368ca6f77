/**
 * Whether a method can read its session's data (docs/guides/sessions-and-state.md "Session data"), decided once when
 * the method is loaded, from its source text. A method that cannot has no data loaded for
 * its calls: with Redis or the cluster's master that is a round trip saved on every call.
 *
 * The reading is conservative: anything it cannot rule out counts as a use. A method can
 * reach `ctx.session` only through its first parameter, by name (or through `arguments`
 * or `eval`), so it cannot when its source never says `session` and every use of that
 * parameter is a plain property read (`ctx.log`, `ctx?.signal`). Passing `ctx` on
 * (`helper(ctx)`), destructuring or spreading it (`{ ...ctx }`), computed reads (`ctx[name]`), escapes (`\u0073`),
 * bound or native functions and parameter lists this reading does not follow all count as
 * a use.
 */

const MAY_REACH_ANYTHING = /session|arguments|eval|\\|\[native code\]/;
const IDENTIFIER = /^[A-Za-z_$][\w$]*$/;

export function mayUseSession(fn: (...args: never[]) => unknown): boolean {
  let source: string;
  try {
    source = Function.prototype.toString.call(fn);
  } catch {
    return true;
  }
  if (MAY_REACH_ANYTHING.test(source)) return true;
  const param = firstParameter(source);
  if (param === null) return false;
  if (param === undefined) return true;
  let declared = false;
  for (const match of source.matchAll(new RegExp(`(?<![\\w$])${param.replace(/\$/g, "\\$")}(?![\\w$])`, "g"))) {
    // `other.ctx` is another object's property, not the parameter; `...ctx` (a spread) is.
    const before = source.slice(Math.max(0, match.index - 3), match.index);
    if (before.endsWith(".") && before !== "...") continue;
    // The first is the parameter itself: every later one must read a named property.
    if (!declared) {
      declared = true;
      continue;
    }
    if (!/^\s*\??\.\s*[A-Za-z_$]/.test(source.slice(match.index + param.length))) return true;
  }
  return false;
}

/** The first parameter's name; null when the function takes none; undefined when it is not a plain name. */
function firstParameter(source: string): string | null | undefined {
  // `ctx => …` and `async ctx => …`
  const bareArrow = /^(?:async\s+)?([A-Za-z_$][\w$]*)\s*=>/.exec(source);
  if (bareArrow) return bareArrow[1];
  // A class, or a method with a computed name: its first "(" need not open the parameters.
  if (source.startsWith("class") || source.startsWith("[")) return undefined;
  const open = source.indexOf("(");
  if (open === -1) return undefined;
  const head = source.slice(0, open);
  // Before the list only `async`, `function`, `*`, `static` and the name may stand.
  if (!/^(?:(?:async|function|static|get|set)\b|\*|\s|[A-Za-z_$][\w$]*)*$/.test(head)) return undefined;
  const list = /^\s*(?:([A-Za-z_$][\w$]*)\s*[,)]|(\)))/.exec(source.slice(open + 1));
  if (!list) return undefined;
  if (list[2] !== undefined) return null;
  return IDENTIFIER.test(list[1]!) ? list[1] : undefined;
}
