/**
 * docs/guides/toolkit.md "Typed calls: counterpart types": its viewer example, compiled
 * against what the command writes for the guides' own notes and chat plugins
 * (docs/guides/server-methods.md, docs/guides/streaming.md), fails on exactly the lines it
 * says fail.
 */
import { expect, it } from "vitest";
import { readDoc } from "../helpers/docs.js";
import { compileViewer, runTypes, typesAppRoot } from "../helpers/viewer-types.js";

const serverExample = (page: string, path: string): string => {
  const match = new RegExp("```ts\\n// " + path.replaceAll(".", "\\.") + "\\n([\\s\\S]*?)```").exec(readDoc(page));
  if (!match) throw new Error(`${page} has no example ${path}`);
  return match[1]!;
};
const viewer = /```ts\n(\/\/ public\/viewer\.ts[\s\S]*?)```/.exec(readDoc("docs/guides/toolkit.md"))?.[1];

it("compiles the toolkit guide's viewer example with errors on exactly the lines it marks", async () => {
  expect(viewer).toBeDefined();
  const root = typesAppRoot({
    "plugins/notes/notes.server.ts": serverExample("docs/guides/server-methods.md", "plugins/notes/notes.server.ts"),
    "plugins/chat/chat.server.ts": serverExample("docs/guides/streaming.md", "plugins/chat/chat.server.ts"),
    // The chat example's model client, which the guide leaves to the reader.
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
