// A `.ts` method's error is logged with the line and column the author wrote, inline and in
// an isolation worker, on every Node line (README "Supported Node"). Run as `node index.js`:
// a test runner's own stack-trace hooks would hide what a real server logs.
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { rpc } from "../helpers/http.js";
import { startEntrypoint, type RunningProcess } from "../helpers/process.js";
import { waitFor } from "../helpers/wait.js";

const ROOT = join(import.meta.dirname, "..", "fixtures", "line-app");
const FILE = join(ROOT, "plugins", "lines", "lines.server.ts");

describe("stack traces of .ts server files", () => {
  let server: RunningProcess;
  beforeAll(async () => {
    server = await startEntrypoint(["--root", ROOT, "--port", "0"]);
  });
  afterAll(() => server?.stop());

  async function loggedStack(method: string): Promise<string> {
    const answer = await rpc(server.url, `plugin/lines/${method}`);
    expect(answer).toMatchObject({ status: 500, body: { code: "RPC_INTERNAL_ERROR" } });
    const requestId = answer.body.details.requestId as string;
    const line = await waitFor(() => server.stdout().split("\n").find((text) => text.includes(requestId) && text.includes('"err"')));
    return (JSON.parse(line).err as { stack: string }).stack;
  }

  it("names the author's line of an inline method", async () => {
    expect(await loggedStack("fails")).toContain(`${FILE}:20:`);
  });

  it("names the author's line of an isolated method", async () => {
    expect(await loggedStack("failsIsolated")).toContain(`${FILE}:22:`);
  });
});
