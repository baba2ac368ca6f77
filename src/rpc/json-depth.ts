/**
 * How deep a JSON text nests, found without parsing it and without recursion: one pass
 * over the bytes counting the brackets outside strings. It costs a few nanoseconds per
 * byte (docs/guides/server-methods.md "Runtime protections"), so it runs on every RPC body before the parser.
 */

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;

/**
 * True when `json` opens more than `limit` arrays or objects inside one another. A text
 * that is not JSON may be misjudged either way; the parser refuses it just after.
 * UTF-8 never encodes a character outside ASCII with a byte below 0x80, so the bytes
 * looked for are always those characters.
 */
export function jsonDepthExceeds(json: Uint8Array, limit: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < json.length; i += 1) {
    const byte = json[i];
    if (inString) {
      if (byte === BACKSLASH) i += 1;
      else if (byte === QUOTE) inString = false;
    } else if (byte === QUOTE) {
      inString = true;
    } else if (byte === OPEN_ARRAY || byte === OPEN_OBJECT) {
      depth += 1;
      if (depth > limit) return true;
    } else if (byte === CLOSE_ARRAY || byte === CLOSE_OBJECT) {
      depth -= 1;
    }
  }
  return false;
}
