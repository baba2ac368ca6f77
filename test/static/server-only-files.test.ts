// docs/reference/http-routes.md: server code and server-only data in plugin and module folders are
// never served, whether by name (TypeScript, server/, settings files) or because a server
// file or boot hook imports them, directly or not.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cp, mkdir, mkdtemp, readFile, rm, symlink, utimes, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { startServer, type TestServer } from "../helpers/server.js";
import { openViewer, rawRequest, rpc } from "../helpers/http.js";

const FIXTURE = join(import.meta.dirname, "../fixtures/server-only-app");
const NOT_FOUND = { error: "Not found", code: "NOT_FOUND", details: {} };

/** A copy of the fixture (in `below` of a new temporary folder), so that tests may add symlinks and edit server files. */
async function copyFixture(below = ""): Promise<string> {
  const root = join(await mkdtemp(join(tmpdir(), "server-only-")), below);
  await cp(FIXTURE, root, { recursive: true });
  // selfref.server.mjs's dependencies: one installed as npm installs a `file:` dependency
  // (a symlink to another served folder), one an ordinary installed package.
  await mkdir(join(root, "plugins/selfref/node_modules/plain-dep"), { recursive: true });
  await symlink("../../linked", join(root, "plugins/selfref/node_modules/linked-dep"));
  await writeFile(join(root, "plugins/selfref/node_modules/plain-dep/package.json"), '{ "name": "plain-dep", "type": "module", "exports": "./index.js" }\n');
  await writeFile(join(root, "plugins/selfref/node_modules/plain-dep/index.js"), 'export const plain = "plain";\n');
  return root;
}

async function expectNotFound(url: string, path: string): Promise<void> {
  for (const method of ["GET", "HEAD"]) {
    const answer = await rawRequest(url, { path, method });
    expect({ path, method, status: answer.status }).toEqual({ path, method, status: 404 });
    if (method === "GET") {
      expect(JSON.parse(answer.body)).toEqual(NOT_FOUND);
      expect(answer.body).not.toContain("SERVER-ONLY");
    }
  }
}

describe("server-only files", () => {
  let root: string;
  let app: TestServer;
  beforeAll(async () => {
    root = await copyFixture();
    // Links whose own names look like assets.
    await symlink("text-utils.ts", join(root, "plugins/notes/alias.js"));
    await symlink("lib/format.js", join(root, "plugins/notes/format-link.js"));
    await symlink("server", join(root, "plugins/notes/peek"));
    // A folder that is node_modules on a case-insensitive disk.
    await mkdir(join(root, "plugins/notes/NODE_MODULES/dep"), { recursive: true });
    await writeFile(join(root, "plugins/notes/NODE_MODULES/dep/index.js"), "// SERVER-ONLY installed package\n");
    // An import by absolute `file:` URL, which needs the copy's own path.
    await writeFile(join(root, "plugins/notes/lib/by-url.mjs"), "// SERVER-ONLY by-url.mjs\nexport const viaUrl = true;\n");
    const byUrl = pathToFileURL(join(root, "plugins/notes/lib/by-url.mjs")).href;
    await writeFile(join(root, "plugins/notes/url.server.mjs"), `import { viaUrl } from ${JSON.stringify(byUrl)};\nexport const isViaUrl = () => viaUrl;\n`);
    app = await startServer({ root });
  });
  afterAll(async () => {
    await app.close();
    await rm(root, { recursive: true, force: true });
  });

  it("the fixture's server files and boot hook load their imports", async () => {
    const viewer = await openViewer(app.url);
    const notes = await rpc(app.url, "plugin/notes/summary", { viewer, body: { args: [" the quick fox "] } });
    expect(notes.body).toEqual({ result: { loud: "THE QUICK FOX", words: 2 } });
    const tools = await rpc(app.url, "module/tools/twice", { viewer, body: { args: [" 21 "] } });
    expect(tools.body).toEqual({ result: 42 });
    const resolved = await rpc(app.url, "plugin/resolved/parts", { viewer });
    expect(resolved.body).toEqual({ result: ["helper", "lib", "data", "thing"] });
  });

  it("still serves ordinary assets of the same folders, including one next to the helpers", async () => {
    for (const [path, type, text] of [
      ["/plugins/notes/ui.js", /javascript/, 'console.log("notes ui");'],
      ["/plugins/notes/style.css", /^text\/css/, ".notes"],
      ["/plugins/notes/lib/browser.js", /javascript/, "browser code"],
      ["/modules/tools/panel.js", /javascript/, "tools panel"],
      ["/modules/tools/panel.css", /^text\/css/, ".tools"],
      ["/plugins/resolved/shared/asset.js", /javascript/, "shared asset"],
    ] as const) {
      const response = await fetch(app.url + path);
      expect({ path, status: response.status }).toEqual({ path, status: 200 });
      expect(response.headers.get("content-type")).toMatch(type);
      expect(await response.text()).toContain(text);
    }
  });

  const byName = [
    "/plugins/notes/text-utils.ts",
    "/plugins/notes/notes.server.ts",
    // Names are matched whatever their case: on a case-insensitive disk these are the same
    // files as a server file and node_modules.
    "/plugins/notes/loud.SERVER.mjs",
    "/plugins/notes/NODE_MODULES/dep/index.js",
    "/plugins/notes/unused.mts",
    "/plugins/notes/unused.cts",
    "/plugins/notes/server.json",
    "/plugins/notes/package.json",
    "/plugins/notes/package-lock.json",
    "/plugins/notes/tsconfig.json",
    "/plugins/notes/server/notes.txt",
    "/plugins/notes/server/index.html",
    "/plugins/notes/server/",
    "/plugins/notes/server",
    "/modules/tools/server/config.json",
    "/modules/tools/shared/package.json",
  ];
  for (const path of byName) {
    it(`never serves ${path} (by its name)`, () => expectNotFound(app.url, path));
  }

  const imported = [
    // notes.server.ts → text-utils.ts → lib/format.js
    "/plugins/notes/lib/format.js",
    // notes.server.ts → lib/helper.mjs → lib/stop-words.json, lib/count.cjs → (require) lib/limits.json
    "/plugins/notes/lib/helper.mjs",
    "/plugins/notes/lib/stop-words.json",
    "/plugins/notes/lib/count.cjs",
    "/plugins/notes/lib/limits.json",
    // tools.server.mjs → shared/math.js
    "/modules/tools/shared/math.js",
    // register.server.mjs (a boot hook) → boot-helper.mjs → boot-settings.json
    "/modules/tools/boot-helper.mjs",
    "/modules/tools/boot-settings.json",
    // url.server.mjs → (file: URL) lib/by-url.mjs
    "/plugins/notes/lib/by-url.mjs",
    // resolved.server.ts → ./helper, ./lib (a folder), ./data.json (no import attribute),
    // @shared/thing (tsconfig.json paths)
    "/plugins/resolved/helper.mjs",
    "/plugins/resolved/lib/index.mjs",
    "/plugins/resolved/data.json",
    "/plugins/resolved/shared/thing.mjs",
    // selfref.server.mjs → (its own package name, through `exports`) lib/secret.js
    "/plugins/selfref/lib/secret.js",
    // selfref.server.mjs → (package name, node_modules/linked-dep → ../../linked) index.js → helper.js
    "/plugins/linked/index.js",
    "/plugins/linked/helper.js",
  ];
  for (const path of imported) {
    it(`never serves ${path} (a server file imports it)`, () => expectNotFound(app.url, path));
  }

  it("imports by package name: followed unless they lead into node_modules, and the graph is complete", async () => {
    const viewer = await openViewer(app.url);
    const answer = await rpc(app.url, "plugin/selfref/words", { viewer });
    expect(answer.body).toEqual({ result: ["swordfish", "linked!", "plain", "b"] });
    expect(app.logs.lines.filter((line) => String(line.msg).startsWith("cannot work out what") && String(line.file).endsWith("selfref.server.mjs"))).toEqual([]);
    // The linked folder's other files are still served.
    expect((await fetch(app.url + "/plugins/linked/asset.js")).status).toBe(200);
  });

  it("never serves a symlink to server-only files, whatever its own name", async () => {
    await expectNotFound(app.url, "/plugins/notes/alias.js");
    await expectNotFound(app.url, "/plugins/notes/format-link.js");
    await expectNotFound(app.url, "/plugins/notes/peek/notes.txt");
  });

  it("a server file whose imports cannot be worked out: a warning, and its folder serves no code or data", async () => {
    const warning = app.logs.lines.find((line) => String(line.msg).startsWith("cannot work out what") && String(line.file).endsWith("lazy.server.mjs"));
    expect(warning).toMatchObject({ level: 40, reason: expect.stringContaining("optional.mjs") });
    for (const path of ["/plugins/lazy/optional.mjs", "/plugins/lazy/other.js", "/plugins/lazy/data.json"]) await expectNotFound(app.url, path);
    for (const path of ["/plugins/lazy/lazy.css", "/plugins/lazy/readme.txt"]) {
      expect((await fetch(app.url + path)).status).toBe(200);
    }
    // Its method still works: the file loads, only the graph is unknown.
    const viewer = await openViewer(app.url);
    expect((await rpc(app.url, "plugin/lazy/maybe", { viewer })).body).toEqual({ result: null });
  });
});

describe("server-only files of an app installed as a package", () => {
  it("its own folders are inside node_modules: imports by package name are followed all the same", async () => {
    const root = await copyFixture("node_modules/viewer-app");
    const app = await startServer({ root });
    try {
      const viewer = await openViewer(app.url);
      expect((await rpc(app.url, "plugin/selfref/words", { viewer })).body).toEqual({ result: ["swordfish", "linked!", "plain", "b"] });
      for (const path of ["/plugins/selfref/lib/secret.js", "/plugins/linked/index.js", "/plugins/linked/helper.js"]) await expectNotFound(app.url, path);
      expect((await fetch(app.url + "/plugins/linked/asset.js")).status).toBe(200);
    } finally {
      await app.close();
      await rm(join(root, "../.."), { recursive: true, force: true });
    }
  });
});

describe("server-only files in dev mode", () => {
  it("a helper that an edited server file starts importing stops being served once the edit loads", async () => {
    const root = await copyFixture();
    const app = await startServer({ root, dev: true });
    try {
      expect((await fetch(app.url + "/plugins/notes/later.js")).status).toBe(200);
      const file = join(root, "plugins/notes/notes.server.ts");
      await writeFile(file, `import "./later.js";\n${await readFile(file, "utf8")}`);
      const later = new Date(Date.now() + 5_000);
      await utimes(file, later, later);
      const viewer = await openViewer(app.url);
      const answer = await rpc(app.url, "plugin/notes/summary", { viewer, body: { args: ["a b"] } });
      expect(answer.body).toEqual({ result: { loud: "A B", words: 1 } });
      expect(app.logs.lines.some((line) => line.msg === "server file reloaded")).toBe(true);
      await expectNotFound(app.url, "/plugins/notes/later.js");
    } finally {
      await app.close();
      await rm(root, { recursive: true, force: true });
    }
  });
});
