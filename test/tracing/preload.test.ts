// docs/guides/deployment.md "Tracing": an operator registers an OpenTelemetry SDK with a preload
// (`--import ./otel.mjs`) and `node index.js` records its RPC calls and proxied requests as
// spans of the caller's trace, the proxy span being the parent of the upstream's request.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { existsSync, mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { configFile } from "../helpers/app-root.js";
import { openViewer, send } from "../helpers/http.js";
import { startEntrypoint, type RunningProcess } from "../helpers/process.js";
import { TEST_SESSION_SECRET } from "../helpers/server.js";
import { TestUpstream } from "../helpers/upstream.js";
import { waitFor } from "../helpers/wait.js";

const TRACE_APP = join(import.meta.dirname, "../fixtures/trace-app");
const TRACE_ID = "0af7651916cd43dd8448eb211c80319c";
const PARENT_ID = "b7ad6b7169203331";

describe("an SDK registered by a preload", () => {
  let upstream: TestUpstream;
  let run: RunningProcess;
  const spansFile = join(mkdtempSync(join(tmpdir(), "counterpart-spans-")), "spans.jsonl");
  beforeAll(async () => {
    upstream = await new TestUpstream().start();
    const config = configFile({ server: { secure: { proxies: { up: { baseUrl: upstream.origin } } } } });
    run = await startEntrypoint(["--port", "0", "--root", TRACE_APP, "--config", config], {
      APP_SESSION_SECRET: TEST_SESSION_SECRET,
      NODE_OPTIONS: `--import ${pathToFileURL(join(TRACE_APP, "otel.mjs")).href}`,
      TRACE_SPANS_FILE: spansFile,
    });
  });
  afterAll(async () => {
    await run?.stop();
    await upstream.close();
  });

  it("records the RPC call and the proxied request as spans of the caller's trace", async () => {
    const viewer = await openViewer(run.url);
    const traceparent = `00-${TRACE_ID}-${PARENT_ID}-01`;
    const called = await send(run.url, "/__rpc/plugin/trace/show", { method: "POST", viewer, headers: { "content-type": "application/json", traceparent }, body: "{}" });
    const proxied = await send(run.url, "/proxy/up/echo", { viewer, headers: { traceparent } });
    expect([called.status, proxied.status]).toEqual([200, 200]);
    // A span ends once its answer is out, so the client may read the answer first.
    const [rpc, proxy] = await waitFor(() => {
      if (!existsSync(spansFile)) return false;
      const spans = readFileSync(spansFile, "utf8").trim().split("\n").filter(Boolean).map((line) => JSON.parse(line));
      const found = [spans.find((span) => span.name === "rpc plugin/trace/show"), spans.find((span) => span.name === "proxy up")];
      return found.every(Boolean) && found;
    }, 5_000, "both spans exported");
    expect([rpc?.traceId, rpc?.parentSpanId, proxy?.traceId, proxy?.parentSpanId]).toEqual([TRACE_ID, PARENT_ID, TRACE_ID, PARENT_ID]);
    expect(called.json.result.trace.spanId).toBe(rpc.spanId);
    expect(proxied.json.headers.traceparent).toBe(`00-${TRACE_ID}-${proxy.spanId}-01`);
    expect(rpc.attributes["counterpart.request_id"]).toBe(called.headers["x-request-id"]);
  });
});
