/**
 * README "Typed calls: counterpart types": its viewer example, compiled against what the
 * command writes for the README's own notes and chat plugins, fails on exactly the lines
 * it says fail.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { expect, it } from "vitest";
import { REPO } from "../helpers/process.js";
import { compileViewer, runTypes, typesAppRoot } from "../helpers/viewer-types.js";

const readme = readFileSync(join(REPO, "README.md"), "utf8");
const serverExample = (path: string): string => {
  const match = new RegExp("```ts\\n// " + path.replaceAll(".", "\\.") + "\\n([\\s\\S]*?)```").exec(readme);
  if (!match) throw new Error(`README has no example ${path}`);
  return match[1]!;
};
const viewer = /```ts\n(\/\/ public\/viewer\.ts[\s\S]*?)```/.exec(readme)?.[1];

it("compiles the README's viewer example with errors on exactly the lines it marks", async () => {
  expect(viewer).toBeDefined();
  const root = typesAppRoot({
    "plugins/notes/notes.server.ts": serverExample("plugins/notes/notes.server.ts"),
    "plugins/chat/chat.server.ts": serverExample("plugins/chat/chat.server.ts"),
    // The chat example's model client, which the README leaves to the reader.
    "plugins/chat/model.ts": "export declare const model: { stream(prompt: string, options: { signal: AbortSignal }): AsyncIterable<string> };\n",
  });
  const run = await runTypes(["--root", root]);
  expect(run.stderr).toBe("");
  expect(run.code).toBe(0);
  const marked = viewer!.split("\n").flatMap((line, index) => (/\/\/ error\b/.test(line) ? [index + 1] : []));
  expect(marked.length).toBeGreaterThan(3);
  const diagnostics = compileViewer(root, viewer!);
  expect(diagnostics.filter((diagnostic) => !diagnostic.file.startsWith("public/viewer-"))).toEqual([]);
  expect([...new Set(diagnostics.map((diagnostic) => diagnostic.line))]).toEqual(marked);
});
