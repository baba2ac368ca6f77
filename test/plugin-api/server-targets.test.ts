// docs/guides/server-methods.md "Server methods": importServerModule / importServerExport reach server files of an
// item and nothing else, with containment checked on real paths.
import { mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { importServerExport, resolveServerTarget } from "../../dist/plugin-api/server-targets.js";
import { importServerFile } from "../../dist/discovery/import-server-file.js";
import { tempApp } from "../helpers/app-root.js";

const root = tempApp({
  files: {
    "modules/lib/index.server.mjs": "export default function main() { return 'index'; } export const named = 'n';",
    "modules/lib/tools/util.server.mjs": "export const util = 1;",
    "modules/lib/tools/plain.mjs": "export const plain = 1;",
    "modules/lib-evil/x.server.mjs": "export const evil = 1;",
    "plugins/me/own.server.mjs": "export const mine = 'mine';",
    "outside/secret.server.mjs": "export const leaked = 1;",
  },
});
mkdirSync(join(root, "modules/lib/links"), { recursive: true });
symlinkSync(join(root, "outside/secret.server.mjs"), join(root, "modules/lib/links/secret.server.mjs"));
writeFileSync(join(root, "plugins/me/index.server.mjs"), "export default 'plugin index';");

const scope = {
  itemDirs: new Map([
    ["module/lib", join(root, "modules/lib")],
    ["module/lib-evil", join(root, "modules/lib-evil")],
    ["plugin/me", join(root, "plugins/me")],
  ]),
  importFile: (file: string) => importServerFile(file),
};
const ctx = { kind: "plugin", itemId: "me" };

describe("server targets", () => {
  it("resolve module:, plugin:, relative and object targets to server files", async () => {
    expect(await resolveServerTarget(scope, ctx, "module:lib")).toBe(join(root, "modules/lib/index.server.mjs"));
    expect(await resolveServerTarget(scope, ctx, "module:lib/tools/util")).toBe(join(root, "modules/lib/tools/util.server.mjs"));
    expect(await resolveServerTarget(scope, ctx, "module:lib/tools/util.server.mjs")).toBe(join(root, "modules/lib/tools/util.server.mjs"));
    expect(await resolveServerTarget(scope, ctx, "./own")).toBe(join(root, "plugins/me/own.server.mjs"));
    expect(await resolveServerTarget(scope, ctx, { kind: "self", path: "own" })).toBe(join(root, "plugins/me/own.server.mjs"));
    expect(await resolveServerTarget(scope, ctx, { kind: "module", id: "lib", path: "\\tools\\util" })).toBe(join(root, "modules/lib/tools/util.server.mjs"));
  });

  it("give the default export, else the module; a named one, else an error naming it", async () => {
    expect(await importServerExport(scope, ctx, "plugin:me")).toBe("plugin index");
    expect(((await importServerExport(scope, ctx, "module:lib")) as () => string)()).toBe("index");
    expect(await importServerExport(scope, ctx, "module:lib", "named")).toBe("n");
    await expect(importServerExport(scope, ctx, "module:lib", "toString")).rejects.toThrow(/Export 'toString' was not found/);
  });

  it("refuse what is not a server file, an unknown item, an escape by path or by symlink, a sibling with a common prefix", async () => {
    await expect(resolveServerTarget(scope, ctx, "module:lib/tools/plain")).rejects.toThrow(/only \*\.server/);
    await expect(resolveServerTarget(scope, ctx, "module:lib/tools/plain.mjs")).rejects.toThrow(/only \*\.server/);
    await expect(resolveServerTarget(scope, ctx, "module:nope")).rejects.toThrow(/Unknown module 'nope'/);
    await expect(resolveServerTarget(scope, ctx, "module:__proto__")).rejects.toThrow(/Unknown module/);
    await expect(resolveServerTarget(scope, ctx, "module:lib/../lib-evil/x")).rejects.toThrow(/escapes the folder of module 'lib'/);
    await expect(resolveServerTarget(scope, ctx, "module:lib/../../outside/secret")).rejects.toThrow(/escapes/);
    await expect(resolveServerTarget(scope, ctx, "module:lib/links/secret")).rejects.toThrow(/escapes/);
    await expect(resolveServerTarget(scope, { kind: "server", itemId: "core" }, "./x")).rejects.toThrow(/needs the ctx of a plugin or module/);
    await expect(resolveServerTarget(scope, ctx, "https://example.com/x")).rejects.toThrow(/Unsupported server target/);
  });

  it("remember resolutions when given a cache (outside dev mode): one entry per path, however it is spelt; refusals are not kept", async () => {
    const cached = { ...scope, resolved: new Map<string, string>() };
    for (const spelling of ["module:lib/tools/util", "module:lib/tools/./util", "module:lib//tools/util"]) {
      expect(await resolveServerTarget(cached, ctx, spelling)).toBe(join(root, "modules/lib/tools/util.server.mjs"));
    }
    await expect(resolveServerTarget(cached, ctx, "module:lib/links/secret")).rejects.toThrow(/escapes/);
    expect([...cached.resolved.values()]).toEqual([join(root, "modules/lib/tools/util.server.mjs")]);
  });
});
