/**
 * The TypeScript examples of the README and docs/ that name a plugin or module file compile
 * against the package's published types, as an author would copy them into an app that
 * `counterpart init` made: with the scaffold's own tsconfig (strict, bundler resolution,
 * verbatimModuleSyntax), the package imported by its own name. A relative import the docs
 * leave to the reader (a model client, say) is stood in for by an untyped module.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { afterAll, describe, expect, it } from "vitest";
import { docPages } from "../helpers/docs.js";

const REPO = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
const EXAMPLE = /```ts\n\/\/ ((?:plugins|modules)\/[^\s]+\.ts)\n([\s\S]*?)```/g;
const RELATIVE_IMPORT = /import\s*\{([^}]*)\}\s*from\s*"(\.\.?\/[^"]+)\.js"/g;

function examples(markdown: string): Array<{ path: string; code: string }> {
  return [...markdown.matchAll(EXAMPLE)].map((match) => ({ path: match[1]!, code: match[2]! }));
}

const DOCS = docPages();

/** The compiler options of the app `counterpart init` writes (templates/app/tsconfig.json). */
function scaffoldOptions(dir: string): ts.CompilerOptions {
  const file = join(REPO, "templates", "app", "tsconfig.json");
  const { config } = ts.readConfigFile(file, ts.sys.readFile);
  return { ...ts.parseJsonConfigFileContent(config, ts.sys, dir).options, noEmit: true };
}

describe("TypeScript examples of the README and docs/", () => {
  const found = DOCS.flatMap((doc) => examples(readFileSync(join(REPO, doc), "utf8")));
  // Inside the repository, so that the package's own name and @types/node resolve.
  mkdirSync(join(REPO, "test-results"), { recursive: true });
  const dir = mkdtempSync(join(REPO, "test-results", "readme-examples-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("finds the examples it checks, in the guides and the README", () => {
    expect(DOCS).toEqual(expect.arrayContaining(["README.md", "docs/guides/server-methods.md", "docs/reference/configuration.md"]));
    expect(found.map((example) => example.path)).toEqual(
      expect.arrayContaining(["plugins/hello/hello.server.ts", "plugins/notes/notes.server.ts", "plugins/chat/chat.server.ts", "plugins/partner/register.server.ts", "plugins/login/login.server.ts", "plugins/pages/fetch-title.server.ts"]),
    );
  });

  it("names each file once, so that no example is compiled in another's place", () => {
    const paths = found.map((example) => example.path);
    expect(paths.filter((path, index) => paths.indexOf(path) !== index)).toEqual([]);
  });

  it("compile under the scaffold's tsconfig against the package's types", () => {
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
    const program = ts.createProgram(files, scaffoldOptions(dir));
    const problems = ts.getPreEmitDiagnostics(program).map((diagnostic) => {
      const where = diagnostic.file ? `${diagnostic.file.fileName.slice(dir.length + 1)}:${diagnostic.file.getLineAndCharacterOfPosition(diagnostic.start ?? 0).line + 1} ` : "";
      return where + ts.flattenDiagnosticMessageText(diagnostic.messageText, "\n");
    });
    expect(problems).toEqual([]);
  });
});
