// The hello plugin's tests (npm test): its methods called as a viewer calls them, through
// the whole server in this process, and one method called alone with a made-up ctx.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { callMethod, loadServerFile, startTestApp } from "@counterpart-viewer/server/testing";

let app;
before(async () => {
  app = await startTestApp({ root: new URL("..", import.meta.url) });
});
after(() => app.close());

test("anyone may greet: the method is public", async () => {
  const hello = app.anonymous.plugin("hello");
  assert.deepEqual(await hello.greet({ name: "Ada" }), { message: "Hello, Ada!" });
});

test("visit counts each viewer's visits in its own session", async () => {
  const ada = (await app.viewer()).plugin("hello");
  const bob = (await app.viewer()).plugin("hello");
  assert.deepEqual(await ada.visit(), { visits: 1 });
  assert.deepEqual(await ada.visit(), { visits: 2 });
  assert.deepEqual(await bob.visit(), { visits: 1 });
});

test("visit needs a session: a caller without one is refused, and the log says so", async () => {
  await assert.rejects(app.anonymous.plugin("hello").visit(), { status: 401, code: "RPC_NO_SESSION" });
  const [event] = app.logs({ event: "rpc.rejected" });
  assert.equal(event.method, "visit");
  assert.equal(event.code, "RPC_NO_SESSION");
});

test("greet, alone, with a config of the test's own", async () => {
  const { greet } = await loadServerFile(new URL("../plugins/hello/hello.server.ts", import.meta.url));
  const run = await callMethod(greet, { name: "  " }, { config: { greeting: "Hi" } });
  assert.deepEqual(run.result, { message: "Hi, stranger!" });
});

test("greet checks its input: a name that is not a string is refused before it runs", async () => {
  await assert.rejects(app.anonymous.plugin("hello").greet({ name: 42 }), { status: 400, code: "RPC_BAD_INPUT" });
});
