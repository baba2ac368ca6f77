// The test `counterpart init` writes (templates/app/test/hello.test.mjs) is README
// "Testing your methods"'s example, and passes in a new app as `npm test` runs it.
import { execFile } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { REPO } from "../helpers/process.js";

const run = promisify(execFile);
const TEMPLATE_TEST = join(REPO, "templates/app/test/hello.test.mjs");

describe("the app template's test", () => {
  it("is the README's example", () => {
    const readme = readFileSync(join(REPO, "README.md"), "utf8");
    const section = readme.slice(readme.indexOf("### Testing your methods"), readme.indexOf("## Server methods"));
    expect(section).toContain("```js\n" + readFileSync(TEMPLATE_TEST, "utf8") + "```");
  });

  it("passes in an app that init made, with the package installed", async () => {
    const dir = join(mkdtempSync(join(tmpdir(), "counterpart-init-")), "my-app");
    await run(process.execPath, [join(REPO, "index.js"), "init", dir], { cwd: REPO });
    // What `npm install` would put there: this package, by its name.
    mkdirSync(join(dir, "node_modules/@counterpart-viewer"), { recursive: true });
    symlinkSync(REPO, join(dir, "node_modules/@counterpart-viewer/server"), "dir");
    const { stdout } = await run("npm", ["test"], { cwd: dir, env: { PATH: process.env.PATH ?? "", npm_config_update_notifier: "false" } });
    expect(stdout).toMatch(/^# pass 4$/m);
    expect(stdout).toMatch(/^# fail 0$/m);
  });
});
