// docs/guides/server-methods.md "Server methods": a server file that does not load is reported with the place to
// fix — `file:line:column`, the line itself, and a hint for the usual causes (a .js import
// without its extension, a folder import) — in the log, in getStatus's `failed`, and in
// the one line `node index.js --strict` prints.
import { describe, expect, it } from "vitest";
import { join } from "node:path";
import { startServer, type TestServer } from "../helpers/server.js";
import { openViewer, rpc } from "../helpers/http.js";
import { expectStartupFailure } from "../helpers/process.js";
import { tempApp } from "../helpers/app-root.js";

const files = {
  "plugins/noext/noext.server.mjs": '// the import is on line 2\nimport { x } from "./helper";\nexport function m() { return x; }\n',
  "plugins/noext/helper.js": "export const x = 1;",
  "plugins/totypes/totypes.server.mjs": 'import { x } from "./typed";\nexport function m() { return x; }\n',
  "plugins/totypes/typed.ts": "export const x: number = 1;",
  "plugins/folder/folder.server.mjs": 'import { z } from "./lib";\nexport function m() { return z; }\n',
  "plugins/folder/lib/index.js": "export const z = 1;",
  "plugins/tsmissing/t.server.ts": 'export const a = 1;\nimport { y } from "./nowhere";\nexport function m(): unknown { return y; }\n',
  "plugins/tssyntax/t.server.ts": "const a: number = 1;\nexport function ( {\n",
  "plugins/jssyntax/j.server.mjs": "const a = 1;\n\nexport function m() { return a +; }\n",
  "plugins/helpersyntax/h.server.mjs": 'import "./broken.mjs";\nexport function m() {}\n',
  "plugins/helpersyntax/broken.mjs": "export const q = 1;\nlet let = 2;\n",
  "plugins/throws/t.server.mjs": 'const a = 1;\nthrow new Error("no config for this");\n',
  "plugins/nopackage/n.server.mjs": 'import "counterpart-test-no-such-package";\nexport function m() {}\n',
};

let app: TestServer;
let root: string;

async function failureOf(id: string): Promise<string> {
  const viewer = await openViewer(app.url);
  const status = await rpc(app.url, "server/core/getStatus", { viewer });
  const failed = status.body.result.failed.find((item: { id: string }) => item.id === id);
  const logged = app.logs.lines.find((line) => line.level === 50 && line.id === id);
  // The log and getStatus say the same.
  expect(String(logged?.msg)).toContain(failed.message);
  return failed.message as string;
}

describe("a server file that does not load", () => {
  it("is reported with its file, line, column and a hint", async () => {
    root = tempApp({ files });
    app = await startServer({ root, dev: true });
    const at = (path: string) => join(root, path);
    try {
      expect(await failureOf("noext")).toBe(
        `${at("plugins/noext/noext.server.mjs")}:2:19: cannot import "./helper": no such file; a .js or .mjs file imports as Node does, which needs the extension: add it ("./helper.js")`,
      );
      expect(await failureOf("totypes")).toMatch(new RegExp(`^${at("plugins/totypes/totypes.server.mjs")}:1:19: cannot import "./typed": .*write the server file as \\.ts`));
      expect(await failureOf("folder")).toMatch(new RegExp(`^${at("plugins/folder/folder.server.mjs")}:1:19: cannot import "./lib": it is a folder.*"./lib/index\\.js"`));
      expect(await failureOf("tsmissing")).toMatch(new RegExp(`^${at("plugins/tsmissing/t.server.ts")}:2:19: cannot import "./nowhere": no such file \\(the \\.ts loader tried`));
      expect(await failureOf("tssyntax")).toBe(`${at("plugins/tssyntax/t.server.ts")}:2:17: Expected identifier but found "(" in \`export function ( {\``);
      expect(await failureOf("jssyntax")).toBe(`${at("plugins/jssyntax/j.server.mjs")}:3:33: SyntaxError: Unexpected token ';' in \`export function m() { return a +; }\``);
      // A helper's error names the server file that failed, then the helper's own place.
      expect(await failureOf("helpersyntax")).toMatch(new RegExp(`^${at("plugins/helpersyntax/h.server.mjs")}: ${at("plugins/helpersyntax/broken.mjs")}:2:5: SyntaxError: .* in \`let let = 2;\``));
      expect(await failureOf("throws")).toBe(`${at("plugins/throws/t.server.mjs")}:2:7: threw while loading: Error: no config for this`);
      expect(await failureOf("nopackage")).toMatch(new RegExp(`^${at("plugins/nopackage/n.server.mjs")}:1:8: cannot import "counterpart-test-no-such-package": the package is not installed`));
      // The caller only learns that the item failed (the message is for the developer's log).
      const answer = await rpc(app.url, "plugin/noext/m");
      expect([answer.status, answer.body.code]).toEqual([503, "RPC_TARGET_UNAVAILABLE"]);
    } finally {
      await app.close();
    }
  });

  it("logs a .ts syntax error once, and no second warning about what the file imports", async () => {
    const only = tempApp({ files: { "plugins/tssyntax/t.server.ts": files["plugins/tssyntax/t.server.ts"] } });
    const server = await startServer({ root: only });
    try {
      const file = join(only, "plugins/tssyntax/t.server.ts");
      const reason = `${file}:2:17: Expected identifier but found "(" in \`export function ( {\``;
      const failed = server.logs.lines.filter((line) => line.level === 50 && line.id === "tssyntax");
      expect(failed).toHaveLength(1);
      expect(failed[0]!.msg).toBe(`plugin tssyntax failed to load, and answers 503 until it is fixed: ${reason}`);
      // The log writes an error's message, then its cause's: the same text was printed twice.
      expect((failed[0]!.err as { message: string }).message).toBe(reason);
      expect(server.logs.lines.filter((line) => String(line.msg).startsWith("cannot work out what"))).toEqual([]);
    } finally {
      await server.close();
    }
  });

  it("under --strict, node index.js prints the place and the hint on its one line", async () => {
    const strictRoot = tempApp({ files: { "plugins/noext/noext.server.mjs": files["plugins/noext/noext.server.mjs"], "plugins/noext/helper.js": files["plugins/noext/helper.js"] } });
    const { stderr } = await expectStartupFailure(/plugin noext failed to load: .*noext\.server\.mjs:2:19: cannot import "\.\/helper": .*add it \("\.\/helper\.js"\)/, ["--root", strictRoot, "--strict"]);
    expect(stderr.trim().split("\n")).toHaveLength(1);
  });
});
