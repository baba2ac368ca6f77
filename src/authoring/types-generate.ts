/**
 * `counterpart types` (docs/guides/toolkit.md "Typed calls: counterpart types"): reads the app's server
 * files with the TypeScript compiler API, never running them, and writes the `.d.ts` that
 * types `xserver.plugin.<id>.<method>`, `AppElement.server()` and `$stream` calls in the
 * viewer's code. The files are the ones the server loads (`scanRoot`), so the two never
 * disagree on what a server file is.
 */
import { dirname, relative, sep } from "node:path";
import type * as TS from "typescript";
import { scanRoot, type FoundItem } from "../discovery/scan.js";
import { readAppCompilerSettings } from "./app-tsconfig.js";
import { loadTypeScript, type TypeScript } from "./load-typescript.js";
import { ToolkitError } from "./toolkit-error.js";
import { TypeFacts } from "./types-facts.js";
import { JsonTypeWriter, type NamedType } from "./types-json.js";
import { readFileMethods, type MethodShape } from "./types-methods.js";
import { renderTypes, type ItemTypes } from "./types-render.js";
import { NOT_METHOD_NAMES } from "../core/not-method-names.js";

export type Expose = "exports" | "policy";

export interface GeneratedTypes {
  readonly text: string;
  readonly items: readonly ItemTypes[];
  /** Things the author may want to fix: a name the browser cannot reach, a policy that cannot be read. */
  readonly warnings: readonly string[];
}

// A method may not be called `$stream` either: that name is the streaming scope.
const UNREACHABLE_METHOD: ReadonlySet<string> = new Set([...NOT_METHOD_NAMES, "$stream"]);

export async function generateTypes(root: string, expose: Expose, command: string): Promise<GeneratedTypes> {
  const ts = await loadTypeScript(root);
  const found = await scanRoot(root);
  const warnings: string[] = [];
  const named: NamedType[] = [];
  const programs = new Programs(ts, root, named);
  programs.announce(found.flatMap(filesOf));
  const items: ItemTypes[] = [];
  for (const item of sortItems(found)) {
    if (NOT_METHOD_NAMES.has(item.id)) {
      warnings.push(`${item.kind} "${item.id}": the browser's xserver.${item.kind} cannot reach this id by name; call it with xserver.call`);
      continue;
    }
    items.push({ kind: item.kind, id: item.id, methods: readItem(ts, programs, root, item, expose, warnings) });
  }
  return { text: renderTypes(items, named, command), items, warnings };
}

function readItem(ts: TypeScript, programs: Programs, root: string, item: FoundItem, expose: Expose, warnings: string[]) {
  const methods = new Map<string, MethodShape & { label: string }>();
  const labelOf = (fileName: string): string => relative(root, fileName).split(sep).join("/");
  for (const file of filesOf(item)) {
    const { program, facts, writer } = programs.for(file);
    const source = program.getSourceFile(file);
    const label = labelOf(file);
    if (source === undefined) throw new ToolkitError(`${label}: TypeScript could not read this file`);
    facts.location = source;
    const read = readFileMethods(ts, program, writer, source, { policyOnly: expose === "policy", bootHook: file === item.bootHook, label, labelOf });
    warnings.push(...read.warnings);
    for (const method of read.methods) {
      if (UNREACHABLE_METHOD.has(method.name)) {
        warnings.push(`${label}: method "${method.name}" cannot be reached by name from the browser; call it with xserver.call`);
        continue;
      }
      const existing = methods.get(method.name);
      // The server refuses to load such an item (docs/guides/server-methods.md "Server methods").
      if (existing !== undefined) throw new ToolkitError(`${item.kind} ${item.id}: method "${method.name}" is exported by both ${existing.label} and ${label}`);
      methods.set(method.name, { ...method, label });
    }
  }
  return [...methods.values()].sort((a, b) => compare(a.name, b.name));
}

/**
 * One program per tsconfig.json: a server file's imports resolve through the `paths` of
 * the tsconfig.json nearest above it, as the server resolves them.
 */
class Programs {
  readonly #ts: TypeScript;
  readonly #root: string;
  readonly #named: NamedType[];
  readonly #files = new Map<string, string[]>();
  readonly #built = new Map<string, { program: TS.Program; checker: TS.TypeChecker; facts: TypeFacts; writer: JsonTypeWriter }>();

  constructor(ts: TypeScript, root: string, named: NamedType[]) {
    this.#ts = ts;
    this.#root = root;
    this.#named = named;
  }

  /** Every file must be announced before the first program is built: a program holds the files it was made with. */
  announce(files: readonly string[]): void {
    for (const file of files) {
      const config = this.#ts.findConfigFile(dirname(file), this.#ts.sys.fileExists) ?? "";
      const group = this.#files.get(config) ?? [];
      group.push(file);
      this.#files.set(config, group);
    }
  }

  for(file: string) {
    const config = this.#ts.findConfigFile(dirname(file), this.#ts.sys.fileExists) ?? "";
    let built = this.#built.get(config);
    if (built === undefined) {
      const { options, ambient } = this.#settings(config);
      const program = this.#ts.createProgram([...(this.#files.get(config) ?? [file]), ...ambient], options);
      const checker = program.getTypeChecker();
      // The compiler's file names use forward slashes on every platform.
      const root = this.#root.split(sep).join("/") + "/";
      const facts = new TypeFacts(this.#ts, checker, {
        isApp: (source) => source.fileName.startsWith(root) && !/[\\/]node_modules[\\/]/.test(source.fileName),
        isLibrary: (source) => program.isSourceFileDefaultLibrary(source),
      });
      built = { program, checker, facts, writer: new JsonTypeWriter(this.#ts, checker, facts, this.#named) };
      this.#built.set(config, built);
    }
    return built;
  }

  /**
   * The settings `check` reads (app-tsconfig.ts), so that the two commands see one app,
   * with the tsconfig's own `.d.ts` files: a global the app declares there is a type, not
   * an error that would be written `unknown`.
   */
  #settings(config: string): { options: TS.CompilerOptions; ambient: string[] } {
    const ts = this.#ts;
    const settings = readAppCompilerSettings(ts, config === "" ? undefined : config);
    const error = settings.diagnostics.find((diagnostic) => diagnostic.category === ts.DiagnosticCategory.Error);
    // Types written from settings the tsconfig did not mean would be wrong without a word.
    if (error !== undefined) throw new ToolkitError(`${config}: ${ts.flattenDiagnosticMessageText(error.messageText, " ")}`);
    const options = settings.options;
    // The app's paths, baseUrl, lib and types, read the way the server loads files: .ts
    // imports as a bundler resolves them, .js files allowed, and strict null checks so
    // that `undefined` and `null` are in the types at all.
    return {
      options: {
        ...options,
        noEmit: true,
        allowJs: true,
        checkJs: false,
        strictNullChecks: true,
        skipLibCheck: true,
        module: ts.ModuleKind.ESNext,
        moduleResolution: ts.ModuleResolutionKind.Bundler,
        allowImportingTsExtensions: true,
        resolveJsonModule: true,
        target: options.target ?? ts.ScriptTarget.ES2022,
        composite: false,
        incremental: false,
        declaration: false,
      },
      ambient: settings.fileNames.filter((name) => name.endsWith(".d.ts")),
    };
  }
}

function filesOf(item: FoundItem): string[] {
  return item.bootHook === undefined ? item.serverFiles : [item.bootHook, ...item.serverFiles];
}

function sortItems(items: readonly FoundItem[]): FoundItem[] {
  return [...items].sort((a, b) => (a.kind === b.kind ? compare(a.id, b.id) : a.kind === "plugin" ? -1 : 1));
}

/** By code point, not by locale: the output must not depend on the machine. */
function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
