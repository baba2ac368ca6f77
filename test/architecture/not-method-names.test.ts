/**
 * The names no proxy turns into a call live in three places that may not import each
 * other (README "Project layout": src/client stands apart from the server's folders, and
 * src/authoring and src/testing share a layer): the browser's proxies, `counterpart types`
 * (which leaves those methods untyped) and the test client (which reaches what a page
 * can). They must not drift, or a typed call would reach nothing, or a test a method no
 * page can call.
 */
import { expect, it } from "vitest";
import { NOT_METHOD_NAMES as types } from "../../src/authoring/types-generate.js";
import { NOT_METHOD_NAMES as testing } from "../../src/testing/item-proxy.js";

// Loaded by a name tsc does not follow: the tests' compile has no DOM types, which the
// client's modules need.
const CLIENT_PROXY = "../../src/client/rpc-proxy.js";

const sorted = (names: ReadonlySet<string>): string[] => [...names].sort();

it("keeps one list of the names the proxies never call", async () => {
  const { NOT_METHOD_NAMES: browser } = (await import(CLIENT_PROXY)) as { NOT_METHOD_NAMES: ReadonlySet<string> };
  expect(sorted(browser)).toEqual(expect.arrayContaining(["then", "toJSON", "constructor", "__proto__"]));
  expect(sorted(types)).toEqual(sorted(browser));
  expect(sorted(testing)).toEqual(sorted(browser));
});
