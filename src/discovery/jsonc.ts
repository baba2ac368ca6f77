/**
 * JSON as tsconfig.json files are written: line and block comments and trailing commas
 * are allowed, as TypeScript and esbuild allow them there. Both are blanked out, outside
 * strings only, and the rest goes to JSON.parse, so anything else stays an error.
 * (typescript's own reader is a development dependency only, not there at run time.)
 */
export function parseJsonWithComments(text: string): unknown {
  const out = text.replace(/^\uFEFF/, "").split("");
  /** The position of the last comma seen, while only blanks and comments follow it. */
  let comma = -1;
  /** The last character outside strings and comments that is not a blank (`"` for a string). */
  let previous = "";
  let at = 0;
  while (at < out.length) {
    const char = out[at]!;
    if (char === '"') {
      comma = -1;
      previous = char;
      at = skipString(out, at);
    } else if (char === "/" && out[at + 1] === "/") {
      while (at < out.length && out[at] !== "\n") out[at++] = " ";
    } else if (char === "/" && out[at + 1] === "*") {
      let close = out.indexOf("*", at + 2);
      while (close !== -1 && out[close + 1] !== "/") close = out.indexOf("*", close + 1);
      // An unclosed comment is left as it is, for JSON.parse to report.
      if (close === -1) break;
      for (let blank = at; blank <= close + 1; blank++) if (out[blank] !== "\n") out[blank] = " ";
      at = close + 2;
    } else {
      if ((char === "}" || char === "]") && comma !== -1) out[comma] = " ";
      // Only a comma after a value trails: `{,}` and `[1,,]` stay errors.
      if (char === ",") comma = comma === -1 && !"{[,".includes(previous) ? at : -1;
      else if (!/\s/.test(char)) comma = -1;
      if (!/\s/.test(char)) previous = char;
      at++;
    }
  }
  return JSON.parse(out.join(""));
}

/** The position after the string that opens at `start` (its escapes skipped). */
function skipString(chars: string[], start: number): number {
  let at = start + 1;
  while (at < chars.length && chars[at] !== '"') at += chars[at] === "\\" ? 2 : 1;
  return at + 1;
}
