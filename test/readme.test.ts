// The README's error table is the client-facing contract: it must list exactly the codes
// the server can answer, with their statuses.
import { describe, expect, it } from "vitest";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { ERROR_CODES } from "../dist/index.js";

const readme = readFileSync(join(import.meta.dirname, "../README.md"), "utf8");
const table = readme.slice(readme.indexOf("## Error codes"), readme.indexOf("## Benchmarks"));
const rows = new Map(
  [...table.matchAll(/^\| `([A-Z_]+)` \| (\d{3}) \|/gm)].map((match) => [match[1]!, Number(match[2])]),
);

describe("README error codes", () => {
  it("lists every declared code with its status", () => {
    for (const [code, { status }] of Object.entries(ERROR_CODES)) {
      expect([code, rows.get(code)]).toEqual([code, status]);
    }
  });

  it("lists no code that is not declared", () => {
    for (const code of rows.keys()) expect(Object.keys(ERROR_CODES)).toContain(code);
  });
});
