// docs/guides/toolkit.md "Starting an app: counterpart init": a new or empty folder only, never an
// overwrite, and a package name npm accepts.
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";
import { installSource } from "../../dist/authoring/install-source.js";
import { REPO, runToExit } from "../helpers/process.js";

describe("counterpart init", () => {
  it("names the package after the folder, made valid for npm, and depends on the clone it ran from", async () => {
    const dir = join(mkdtempSync(join(tmpdir(), "counterpart-init-")), "My Viewer App");
    const result = await runToExit(["init", dir]);
    expect(result.code).toBe(0);
    const manifest = JSON.parse(readFileSync(join(dir, "package.json"), "utf8"));
    const ours = JSON.parse(readFileSync(join(import.meta.dirname, "../../package.json"), "utf8"));
    expect(manifest.name).toBe("my-viewer-app");
    // Not on the registry yet: `^version` would answer 404 at the app's first npm install.
    const spec = `file:${relative(dir, REPO)}`;
    // zod for the hello plugin's `input` schema.
    expect(manifest.dependencies).toEqual({ [ours.name]: spec, zod: "^4.6.7" });
    expect(result.stdout).toContain(`package.json depends on "${ours.name}": "${spec}" (${REPO}), the copy init ran from`);
    expect(readdirSync(dir)).toContain(".gitignore");
    expect(readFileSync(join(dir, "public", "index.html"), "utf8")).toContain("<title>my-viewer-app</title>");
  });

  it("refuses a folder that holds files, and leaves them as they were", async () => {
    const dir = mkdtempSync(join(tmpdir(), "counterpart-init-"));
    writeFileSync(join(dir, "package.json"), "{}");
    const result = await runToExit(["init", dir]);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^counterpart: .* is not empty \(package\.json\)/);
    expect(readdirSync(dir)).toEqual(["package.json"]);
    expect(readFileSync(join(dir, "package.json"), "utf8")).toBe("{}");
  });

  it("accepts an empty folder or one with only .git, and refuses a name npm would not", async () => {
    const dir = mkdtempSync(join(tmpdir(), "counterpart-init-"));
    mkdirSync(join(dir, ".git"));
    expect((await runToExit(["init", dir, "--name", "ok-name"])).code).toBe(0);
    // A worktree's .git is a file: still not the app's, and not listed as written.
    const worktree = mkdtempSync(join(tmpdir(), "counterpart-init-"));
    writeFileSync(join(worktree, ".git"), "gitdir: elsewhere\n");
    const made = await runToExit(["init", worktree, "--name", "in-a-worktree"]);
    expect(made.code).toBe(0);
    expect(made.stdout).not.toMatch(/^\s+\.git$/m);
    expect(made.stdout).toMatch(/^\s+\.gitignore$/m);
    const bad = await runToExit(["init", join(dir, "other"), "--name", "Not Valid"]);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/"Not Valid" is not a valid npm package name/);
  });
});

describe("where init's copy of the server came from", () => {
  const tree = mkdtempSync(join(tmpdir(), "counterpart-source-"));
  const installed = join(tree, "node_modules", "@counterpart-viewer", "server");
  mkdirSync(installed, { recursive: true });
  const lockWith = (resolved: string) =>
    writeFileSync(join(tree, "node_modules", ".package-lock.json"), JSON.stringify({ packages: { "node_modules/@counterpart-viewer/server": { version: "0.1.0", resolved } } }));

  it("is the tarball npm (or npx --package) installed it from, relative to the tree", () => {
    lockWith("file:../packs/counterpart-viewer-server-0.1.0.tgz");
    expect(installSource(installed)).toEqual({ kind: "file", path: join(tree, "..", "packs", "counterpart-viewer-server-0.1.0.tgz") });
  });

  it("is the registry when the lockfile says so, or says nothing", () => {
    lockWith("https://registry.npmjs.org/@counterpart-viewer/server/-/server-0.1.0.tgz");
    expect(installSource(installed)).toEqual({ kind: "registry" });
    writeFileSync(join(tree, "node_modules", ".package-lock.json"), "{}");
    expect(installSource(installed)).toEqual({ kind: "registry" });
  });
});
