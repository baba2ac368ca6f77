// docs/guides/outbound-guard.md "server.outbound settings": a request the guard blocks for its
// address usually first shows up as a method's 500 in the log. The log line names the
// setting that lifts the block, the entry to add and where it is documented.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { tempApp } from "../helpers/app-root.js";
import { rpc } from "../helpers/http.js";
import { startServer, type TestServer } from "../helpers/server.js";

const FETCHER = `export const policy = { get: { auth: { public: true } }, odd: { auth: { public: true } } };
export async function get() {
  await APP_SERVER.safeFetch("http://127.0.0.1:9/status");
}
export async function odd() {
  await APP_SERVER.safeFetch("ftp://example.com/");
}
`;

describe("an outbound request blocked by the guard", () => {
  let app: TestServer;
  beforeAll(async () => {
    app = await startServer({ root: tempApp({ files: { "plugins/fetcher/fetcher.server.mjs": FETCHER } }) });
  });
  afterAll(async () => app?.close());

  it("logs the server.outbound.allow entry that would let it through, and its doc", async () => {
    const answer = await rpc(app.url, "plugin/fetcher/get");
    expect([answer.status, answer.body.code]).toEqual([500, "RPC_INTERNAL_ERROR"]);
    const event = app.logs.events().find((line) => line.method === "get")!;
    expect((event.err as { message: string }).message).toBe(
      'Outbound request to 127.0.0.1:9 (127.0.0.1) blocked: loopback; to let methods reach it, list "127.0.0.1:9" in server.outbound.allow (docs/guides/outbound-guard.md#serveroutbound-settings)',
    );
  });

  it("does not suggest the allow list for what it cannot lift (a scheme)", async () => {
    await rpc(app.url, "plugin/fetcher/odd");
    const event = app.logs.events().find((line) => line.method === "odd")!;
    expect((event.err as { message: string }).message).toBe("Outbound request to example.com blocked: scheme");
  });
});
