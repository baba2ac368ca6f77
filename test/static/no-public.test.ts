// docs/guides/your-app.md: an app root with only plugins (its page served from elsewhere)
// starts, with one warning that says what it means, not the static library's
// '"root" path must exist'; its plugins' files and methods are served as usual.
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { rpc, send } from "../helpers/http.js";
import { startServer, type TestServer } from "../helpers/server.js";

describe("an app root without public/", () => {
  let app: TestServer;
  let root: string;
  beforeAll(async () => {
    root = mkdtempSync(join(tmpdir(), "counterpart-nopublic-"));
    mkdirSync(join(root, "plugins", "p"), { recursive: true });
    writeFileSync(join(root, "plugins", "p", "p.server.mjs"), "export const policy = { f: { auth: { public: true } } };\nexport function f() { return 1; }\n");
    writeFileSync(join(root, "plugins", "p", "ui.css"), "body {}\n");
    app = await startServer({ root });
  });
  afterAll(async () => app?.close());

  it("starts with one warning naming the folder and what it means", () => {
    const warnings = app.logs.lines.filter((line) => line.level === 40).map((line) => line.msg);
    expect(warnings).toContain(`${root} has no public/ folder: no viewer page is served (GET / answers 404), only its plugins' and modules' files and methods`);
    expect(warnings.filter((msg) => String(msg).includes("must exist"))).toEqual([]);
  });

  it("answers 404 for / and serves its plugins' files and methods", async () => {
    const page = await send(app.url, "/");
    expect([page.status, page.json?.code]).toEqual([404, "NOT_FOUND"]);
    expect((await send(app.url, "/plugins/p/ui.css")).status).toBe(200);
    expect((await rpc(app.url, "plugin/p/f")).body).toEqual({ result: 1 });
  });
});
