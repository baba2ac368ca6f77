/**
 * The names no proxy turns into a call live in two places that may not import each other
 * (docs/reference/project.md "Project layout": src/client stands apart from the server's folders): the
 * browser's proxies, and src/core's copy that `counterpart types` (which leaves those
 * methods untyped) and the test client (which reaches what a page can) share. They must
 * not drift, or a typed call would reach nothing, or a test a method no page can call.
 */
import { expect, it } from "vitest";
import { NOT_METHOD_NAMES as server } from "../../src/core/not-method-names.js";

// Loaded by a name tsc does not follow: the tests' compile has no DOM types, which the
// client's modules need.
const CLIENT_PROXY = "../../src/client/rpc-proxy.js";

const sorted = (names: ReadonlySet<string>): string[] => [...names].sort();

it("keeps one list of the names the proxies never call", async () => {
  const { NOT_METHOD_NAMES: browser } = (await import(CLIENT_PROXY)) as { NOT_METHOD_NAMES: ReadonlySet<string> };
  expect(sorted(browser)).toEqual(expect.arrayContaining(["then", "toJSON", "constructor", "__proto__"]));
  expect(sorted(server)).toEqual(sorted(browser));
});
