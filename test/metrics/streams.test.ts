// docs/reference/metrics.md, streaming answers (docs/guides/streaming.md "Streaming
// answers"): streams admitted and ended by method and code, how long they took, and the
// events and bytes they wrote, scraped over HTTP after real streams: one that completes,
// one that times out, one whose reader hangs up, and a streaming call refused before it
// was admitted (a plain answer, not a stream).
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { useServer } from "../helpers/server.js";
import { openStream } from "../helpers/stream.js";
import { rpc } from "../helpers/http.js";
import { sample, scrape } from "../helpers/metrics.js";
import { waitFor } from "../helpers/wait.js";

const ROOT = join(import.meta.dirname, "../fixtures/stream-app");
const labels = (method: string) => ({ kind: "plugin", id: "ticker", method });

describe("stream metrics", () => {
  const app = useServer({ root: ROOT, config: { server: { metrics: { enabled: true }, rpc: { streamHeartbeatMs: 150 } }, plugins: { ticker: {} } } });
  let completedBytes = 0;

  beforeAll(async () => {
    const completed = await openStream(app.url, "plugin/ticker/count", { viewer: app.viewer, args: [{ n: 4 }] });
    expect(await completed.finished).toBe("end");
    expect(completed.records.at(-1)).toMatchObject({ done: true, ok: true });
    completedBytes = completed.bytes();
  });

  it("counts a stream that completes: started, ended OK, its events and every body byte", async () => {
    const text = await scrape(app.url);
    expect(sample(text, "app_rpc_streams_started_total", labels("count"))).toBe(1);
    expect(sample(text, "app_rpc_streams_ended_total", { ...labels("count"), code: "OK" })).toBe(1);
    expect(sample(text, "app_rpc_stream_events_total", labels("count"))).toBe(4);
    // What the reader received: the events, any pings and the terminal record.
    expect(sample(text, "app_rpc_stream_bytes_total", labels("count"))).toBe(completedBytes);
    expect(sample(text, "app_rpc_stream_duration_seconds_count", labels("count"))).toBe(1);
    expect(sample(text, "app_rpc_stream_duration_seconds_bucket", { ...labels("count"), le: "+Inf" })).toBe(1);
    // A stream is a call too.
    expect(sample(text, "app_rpc_calls_total", { ...labels("count"), code: "OK" })).toBe(1);
  });

  it("counts a stream that times out under RPC_TIMEOUT, with the event it wrote", async () => {
    const held = await openStream(app.url, "plugin/ticker/hold", { viewer: app.viewer });
    expect(await held.finished).toBe("end");
    expect(held.records.at(-1)).toMatchObject({ done: true, ok: false, code: "RPC_TIMEOUT" });
    const text = await scrape(app.url);
    expect(sample(text, "app_rpc_streams_started_total", labels("hold"))).toBe(1);
    expect(sample(text, "app_rpc_streams_ended_total", { ...labels("hold"), code: "RPC_TIMEOUT" })).toBe(1);
    expect(sample(text, "app_rpc_streams_ended_total", { ...labels("hold"), code: "OK" })).toBeUndefined();
    expect(sample(text, "app_rpc_stream_events_total", labels("hold"))).toBe(1);
    expect(sample(text, "app_rpc_stream_bytes_total", labels("hold"))).toBe(held.bytes());
  });

  it("counts a stream whose reader hung up under RPC_CLIENT_CLOSED", async () => {
    const abandoned = await openStream(app.url, "plugin/ticker/holdLong", { viewer: app.viewer });
    await abandoned.waitFor((record) => record.event?.holding === true);
    // Started as soon as the headers are out, ended only once the server sees the reader go.
    expect(sample(await scrape(app.url), "app_rpc_streams_started_total", labels("holdLong"))).toBe(1);
    expect(sample(await scrape(app.url), "app_rpc_streams_ended_total", { ...labels("holdLong"), code: "RPC_CLIENT_CLOSED" })).toBeUndefined();
    abandoned.destroy();
    await waitFor(() => app.logs.events().some((line) => line.method === "holdLong" && line.code === "RPC_CLIENT_CLOSED"), 5_000, "the server to see the reader leave");
    const text = await scrape(app.url);
    expect(sample(text, "app_rpc_streams_ended_total", { ...labels("holdLong"), code: "RPC_CLIENT_CLOSED" })).toBe(1);
    expect(sample(text, "app_rpc_stream_events_total", labels("holdLong"))).toBe(1);
    expect(sample(text, "app_rpc_stream_duration_seconds_count", labels("holdLong"))).toBe(1);
  });

  it("does not count a streaming call refused before admission as a stream", async () => {
    const noSession = await openStream(app.url, "plugin/ticker/fail", { viewer: null });
    expect(noSession.status).toBe(401);
    await noSession.finished;
    const unasked = await rpc(app.url, "plugin/ticker/fail", { viewer: app.viewer });
    expect([unasked.status, unasked.body.code]).toEqual([400, "RPC_STREAM_REQUIRED"]);
    const text = await scrape(app.url);
    expect(sample(text, "app_rpc_calls_total", { ...labels("fail"), code: "RPC_NO_SESSION" })).toBe(1);
    expect(sample(text, "app_rpc_calls_total", { ...labels("fail"), code: "RPC_STREAM_REQUIRED" })).toBe(1);
    expect(sample(text, "app_rpc_streams_started_total", labels("fail"))).toBeUndefined();
    expect(sample(text, "app_rpc_streams_ended_total", { ...labels("fail"), code: "RPC_NO_SESSION" })).toBeUndefined();
    expect(sample(text, "app_rpc_stream_events_total", labels("fail"))).toBeUndefined();
  });
});
