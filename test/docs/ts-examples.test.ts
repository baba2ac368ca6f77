/**
 * The TypeScript examples of the README that name a plugin or module file compile against
 * the package's published types, as an author would copy them: strict, NodeNext, the
 * package imported by its own name. A relative import the README leaves to the reader
 * (a model client, say) is stood in for by an untyped module.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { afterAll, describe, expect, it } from "vitest";

const REPO = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
const EXAMPLE = /```ts\n\/\/ ((?:plugins|modules)\/[^\s]+\.ts)\n([\s\S]*?)```/g;
const RELATIVE_IMPORT = /import\s*\{([^}]*)\}\s*from\s*"(\.\.?\/[^"]+)\.js"/g;

function examples(markdown: string): Array<{ path: string; code: string }> {
  return [...markdown.matchAll(EXAMPLE)].map((match) => ({ path: match[1]!, code: match[2]! }));
}

describe("README TypeScript examples", () => {
  const found = examples(readFileSync(join(REPO, "README.md"), "utf8"));
  // Inside the repository, so that the package's own name and @types/node resolve.
  mkdirSync(join(REPO, "test-results"), { recursive: true });
  const dir = mkdtempSync(join(REPO, "test-results", "readme-examples-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("finds the examples it checks", () => {
    expect(found.map((example) => example.path)).toEqual(
      expect.arrayContaining(["plugins/notes/notes.server.ts", "plugins/chat/chat.server.ts", "plugins/partner/register.server.ts"]),
    );
  });

  it("compile with strict TypeScript against the package's types", () => {
    const files: string[] = [];
    for (const { path, code } of found) {
      const file = join(dir, path);
      mkdirSync(dirname(file), { recursive: true });
      writeFileSync(file, code);
      files.push(file);
      for (const [, names, spec] of code.matchAll(RELATIVE_IMPORT)) {
        const stand = join(dirname(file), `${spec}.ts`);
        writeFileSync(stand, names!.split(",").map((name) => `export declare const ${name.trim()}: any;\n`).join(""));
      }
    }
    const program = ts.createProgram(files, {
      strict: true,
      noEmit: true,
      target: ts.ScriptTarget.ES2022,
      module: ts.ModuleKind.NodeNext,
      moduleResolution: ts.ModuleResolutionKind.NodeNext,
      types: ["node"],
      skipLibCheck: true,
    });
    const problems = ts.getPreEmitDiagnostics(program).map((diagnostic) => {
      const where = diagnostic.file ? `${diagnostic.file.fileName.slice(dir.length + 1)}:${diagnostic.file.getLineAndCharacterOfPosition(diagnostic.start ?? 0).line + 1} ` : "";
      return where + ts.flattenDiagnosticMessageText(diagnostic.messageText, "\n");
    });
    expect(problems).toEqual([]);
  });
});
