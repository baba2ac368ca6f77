/**
 * JSON as tsconfig.json and server.json files are written: comments and trailing commas
 * allowed, as TypeScript and esbuild allow them (jsonc-parser, the reader VS Code uses).
 * Anything else stays an error, naming the file and the line.
 */
import { parse, printParseErrorCode, type ParseError } from "jsonc-parser";

export function parseJsonWithComments(text: string, file: string): unknown {
  const errors: ParseError[] = [];
  const value: unknown = parse(text, errors, { allowTrailingComma: true, disallowComments: false });
  if (errors.length > 0) {
    const first = errors[0]!;
    const line = text.slice(0, first.offset).split("\n").length;
    throw new SyntaxError(`${file}:${line}: ${printParseErrorCode(first.error)}`);
  }
  return value;
}
