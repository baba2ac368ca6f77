// The test `counterpart init` writes (templates/app/test/hello.test.mjs) is
// docs/guides/toolkit.md "Testing your methods"'s example. That it passes in a new app, on the packed package:
// test/authoring/author-journey.test.ts.
import { readFileSync } from "node:fs";
import { docSection } from "../helpers/docs.js";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { REPO } from "../helpers/process.js";

const TEMPLATE_TEST = join(REPO, "templates/app/test/hello.test.mjs");

describe("the app template's test", () => {
  it("is the toolkit guide's example", () => {
    const section = docSection("docs/guides/toolkit.md", "## Testing your methods");
    expect(section).toContain("```js\n" + readFileSync(TEMPLATE_TEST, "utf8") + "```");
  });
});
