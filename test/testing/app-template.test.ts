// The test `counterpart init` writes (templates/app/test/hello.test.mjs) is README
// "Testing your methods"'s example. That it passes in a new app, on the packed package:
// test/authoring/author-journey.test.ts.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { REPO } from "../helpers/process.js";

const TEMPLATE_TEST = join(REPO, "templates/app/test/hello.test.mjs");

describe("the app template's test", () => {
  it("is the README's example", () => {
    const readme = readFileSync(join(REPO, "README.md"), "utf8");
    const section = readme.slice(readme.indexOf("### Testing your methods"), readme.indexOf("## Server methods"));
    expect(section).toContain("```js\n" + readFileSync(TEMPLATE_TEST, "utf8") + "```");
  });
});
