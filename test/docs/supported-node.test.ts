// README "Supported Node" is held to what package.json and .ci/run say, so that the lines a
// user reads, the range npm checks and the versions CI runs cannot drift apart.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

const REPO = join(import.meta.dirname, "..", "..");
const readme = readFileSync(join(REPO, "README.md"), "utf8");
const section = readme.slice(readme.indexOf("### Supported Node"), readme.indexOf("\n## ", readme.indexOf("### Supported Node")));
const rows = [...section.matchAll(/^\| Node (\d+)[^|]*\| ([\d.]+) and later \1\.x[^|]*\| ([\d.]+) \|$/gm)].map((m) => ({ line: m[1]!, floor: m[2]!, ran: m[3]! }));

describe("README \"Supported Node\"", () => {
  it("names three lines, newest first", () => {
    expect(rows.map((row) => row.line)).toEqual(["24", "22", "20"]);
  });

  it("matches package.json engines", () => {
    const engines = JSON.parse(readFileSync(join(REPO, "package.json"), "utf8")).engines.node as string;
    const floors = rows.map((row) => (/^\d+\.\d+$/.test(row.floor) ? `${row.floor}.0` : row.floor));
    expect(engines).toBe([...floors].reverse().map((floor) => `^${floor}`).join(" || "));
  });

  it("says which versions .ci/run tests, the machine's Node 20 besides", () => {
    const ci = readFileSync(join(REPO, ".ci/run"), "utf8");
    const lines = /^NODE_LINES=\(([^)]*)\)$/m.exec(ci)![1]!.split(/\s+/);
    expect(rows.filter((row) => row.line !== "20").map((row) => row.ran).sort()).toEqual([...lines].sort());
  });
});
