/**
 * `counterpart types` the way an author uses it: an app root, the real command run on it,
 * and viewer code compiled with tsc against the file it wrote. The root sits inside the
 * repository (test-results/, no package.json of its own) so that
 * `@counterpart-viewer/server` and its `/client` resolve to this build by the package's
 * own name, as they would from an app's node_modules.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import ts from "typescript";
import { afterAll } from "vitest";
import { REPO, runToExit } from "./process.js";

export const TYPES_FILE = "counterpart-env.d.ts";

/** A fresh app root with `files` (path → content), removed after the test file. */
export function typesAppRoot(files: Record<string, string>): string {
  mkdirSync(join(REPO, "test-results"), { recursive: true });
  const root = mkdtempSync(join(REPO, "test-results", "types-app-"));
  afterAll(() => rmSync(root, { recursive: true, force: true }));
  writeFiles(root, files);
  return root;
}

export function writeFiles(root: string, files: Record<string, string>): void {
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), content);
  }
}

/** `node index.js types ...` as a child process. */
export function runTypes(args: string[], env: Record<string, string> = {}) {
  return runToExit(["types", ...args], env, 60_000);
}

export interface ViewerDiagnostic {
  /** Relative to the app root. */
  file: string;
  line: number;
  code: number;
  message: string;
}

/**
 * A viewer's compile: strict, the DOM, a bundler's resolution, and no skipLibCheck, so that
 * the generated file and the client's .d.ts files are checked too. TypeScript's own lib
 * files are not: checking lib.dom.d.ts took over a second of every compile and can find
 * nothing of ours (a clash with a global we declare is reported at our declaration).
 */
const VIEWER_OPTIONS: ts.CompilerOptions = {
  strict: true,
  noEmit: true,
  target: ts.ScriptTarget.ES2022,
  module: ts.ModuleKind.ESNext,
  moduleResolution: ts.ModuleResolutionKind.Bundler,
  lib: ["lib.es2022.d.ts", "lib.dom.d.ts", "lib.dom.iterable.d.ts"],
  types: [],
  skipLibCheck: false,
  skipDefaultLibCheck: true,
};

/**
 * TypeScript's lib files, parsed once for every compile of the test file, as an editor's
 * language service shares them: they never change during a run, while the app's files
 * (rewritten by `counterpart types` between compiles) are read afresh every time.
 */
const libFiles = new Map<string, ts.SourceFile | undefined>();
const LIB_DIR = dirname(ts.getDefaultLibFilePath(VIEWER_OPTIONS));

function viewerHost(): ts.CompilerHost {
  const host = ts.createCompilerHost(VIEWER_OPTIONS);
  const read = host.getSourceFile.bind(host);
  host.getSourceFile = (fileName, languageVersion, onError, shouldCreate) => {
    if (dirname(fileName) !== LIB_DIR) return read(fileName, languageVersion, onError, shouldCreate);
    if (!libFiles.has(fileName)) libFiles.set(fileName, read(fileName, languageVersion, onError, shouldCreate));
    return libFiles.get(fileName);
  };
  return host;
}

let viewers = 0;

/**
 * Compiles `code` as `<root>/public/viewer-N.ts`, with the generated file when `withTypes`
 * (its default path, or the one given), and returns every diagnostic.
 */
export function compileViewer(root: string, code: string, withTypes: boolean | string = true): ViewerDiagnostic[] {
  const file = join(root, "public", `viewer-${++viewers}.ts`);
  writeFiles(root, { [relative(root, file)]: code });
  const types = withTypes === false ? [] : [withTypes === true ? join(root, TYPES_FILE) : withTypes];
  const program = ts.createProgram([file, ...types], VIEWER_OPTIONS, viewerHost());
  return ts.getPreEmitDiagnostics(program).map((diagnostic) => ({
    file: diagnostic.file ? relative(root, diagnostic.file.fileName) : "",
    line: diagnostic.file ? diagnostic.file.getLineAndCharacterOfPosition(diagnostic.start ?? 0).line + 1 : 0,
    code: diagnostic.code,
    message: ts.flattenDiagnosticMessageText(diagnostic.messageText, " "),
  }));
}

/**
 * Checks a viewer file whose lines that must not compile end with `// error TSnnnn`: the
 * compile fails on exactly those lines, with those codes, and nowhere else.
 */
export function expectErrorsWhereMarked(root: string, code: string): { expected: string[]; actual: string[]; diagnostics: ViewerDiagnostic[] } {
  const expected = code
    .split("\n")
    .flatMap((text, index) => [...text.matchAll(/\/\/ error (TS\d+)/g)].map((match) => `line ${index + 1}: ${match[1]}`));
  const diagnostics = compileViewer(root, code);
  const actual = [...new Set(diagnostics.map((diagnostic) => (diagnostic.file.startsWith("public/viewer-") ? `line ${diagnostic.line}: TS${diagnostic.code}` : `${diagnostic.file}:${diagnostic.line}: TS${diagnostic.code} ${diagnostic.message}`)))];
  return { expected, actual, diagnostics };
}
