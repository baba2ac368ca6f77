/**
 * The layers of src/ (docs/reference/project.md "Project layout"): a folder may import only from folders on a
 * lower layer, never from a sibling on its own layer or from above, so no two folders can
 * ever import each other. Read from the source, so a stray import fails here at once.
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const SRC = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "src");

/** Lowest first. The README's layout section draws the same list. */
export const LAYERS: string[][] = [
  ["errors"],
  ["validation"],
  ["config", "log"],
  ["core", "http", "outbound", "tracing"],
  ["state"],
  ["auth"],
  ["plugin-api"],
  ["discovery"],
  ["runtime"],
  ["rpc", "proxy", "static", "metrics", "health", "server-routes"],
  ["app"],
  ["authoring", "testing"],
  ["cli"],
  ["cluster"],
];

const rankOf = new Map(LAYERS.flatMap((folders, rank) => folders.map((folder) => [folder, rank] as const)));

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? sourceFiles(path) : name.endsWith(".ts") ? [path] : [];
  });
}

function folderOf(file: string): string {
  const rel = relative(SRC, file);
  return rel.includes("/") ? rel.split("/")[0]! : "(root)";
}

const IMPORT = /(?:\bfrom\s+|\bimport\s*\(?\s*)"(\.{1,2}\/[^"]+)"/g;

function importsOf(file: string): Array<{ folder: string; spec: string }> {
  const text = readFileSync(file, "utf8");
  return [...text.matchAll(IMPORT)].map((match) => ({ folder: folderOf(resolve(dirname(file), match[1]!)), spec: match[1]! }));
}

describe("src/ layers", () => {
  const files = sourceFiles(SRC);

  it("places every folder of src/ on a layer (the browser client stands apart)", () => {
    const folders = new Set(files.map(folderOf));
    folders.delete("(root)");
    folders.delete("client");
    expect([...folders].filter((folder) => !rankOf.has(folder))).toEqual([]);
  });

  it("imports only downwards: no folder imports a sibling on its layer or one above it", () => {
    const wrong: string[] = [];
    for (const file of files) {
      const from = folderOf(file);
      if (from === "(root)" || from === "client") continue;
      for (const { folder, spec } of importsOf(file)) {
        if (folder === from) continue;
        if (!(rankOf.get(folder)! < rankOf.get(from)!)) wrong.push(`${relative(SRC, file)} imports ${spec}`);
      }
    }
    expect(wrong).toEqual([]);
  });

  it("keeps the browser client free of server code", () => {
    const wrong = files
      .filter((file) => folderOf(file) === "client")
      .flatMap((file) => importsOf(file).filter(({ folder }) => folder !== "client").map(({ spec }) => `${relative(SRC, file)} imports ${spec}`));
    expect(wrong).toEqual([]);
  });
});
