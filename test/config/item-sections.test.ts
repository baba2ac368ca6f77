// docs/reference/configuration.md: a `plugins.<id>` or `modules.<id>` section (or the secure tier's
// `server.secure.plugins.<id>`) for an item the app root does not have is reported at start
// as a warning, with the id it was probably meant for. The server starts all the same.
import { describe, expect, it } from "vitest";
import { startServer } from "../helpers/server.js";
import { rpc } from "../helpers/http.js";
import { tempApp } from "../helpers/app-root.js";

describe("config sections for items that do not exist", () => {
  it("warns once per section, naming the key and the id meant, and serves", async () => {
    const root = tempApp({
      files: {
        "plugins/notes/n.server.mjs": "export const policy = { m: { auth: { public: true } } }; export function m(ctx) { return ctx.config; }",
        "modules/search/s.server.mjs": "export function s() {}",
      },
    });
    const app = await startServer({
      root,
      config: {
        plugins: { notes: { a: 1 }, notse: { b: 2 }, search: {}, unrelated: {} },
        server: { secure: { modules: { serach: { key: "x" } } } },
      },
    });
    try {
      expect((await rpc(app.url, "plugin/notes/m")).body.result).toEqual({ a: 1 });
      const warnings = app.logs.lines.filter((line) => line.level === 40 && typeof line.key === "string").map((line) => line.msg);
      expect(warnings).toEqual([
        'plugins.notse: there is no plugin "notse" (no folder plugins/notse), so nothing reads this section; did you mean "plugins.notes"?',
        'plugins.search: there is no plugin "search" (no folder plugins/search), so nothing reads this section; search is a module: did you mean "modules.search"?',
        'plugins.unrelated: there is no plugin "unrelated" (no folder plugins/unrelated), so nothing reads this section',
        'server.secure.modules.serach: there is no module "serach" (no folder modules/serach), so nothing reads this section; did you mean "server.secure.modules.search"?',
      ]);
    } finally {
      await app.close();
    }
  });
});
