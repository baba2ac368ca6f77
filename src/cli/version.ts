/**
 * The package version, read from package.json at run time rather than copied into the
 * build, so that `--version` can never disagree with the package that was installed.
 */
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

// dist/cli/version.js → the package root, two folders up (as src/cli/ is in the source tree).
const PACKAGE_JSON = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "package.json");

export function packageVersion(): string {
  return (JSON.parse(readFileSync(PACKAGE_JSON, "utf8")) as { version: string }).version;
}
