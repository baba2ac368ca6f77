/**
 * A streaming answer through a real nginx with the proxy settings docs/guides/deployment.md
 * gives, even with response buffering left on (nginx's default): each line, heartbeats
 * included, must reach the viewer as it is written, not when the method ends.
 */
import { afterAll, beforeAll, expect, it } from "vitest";
import { join } from "node:path";
import { startServer, type TestServer } from "../helpers/server.js";
import { openViewer, type Viewer } from "../helpers/http.js";
import { openStream } from "../helpers/stream.js";
import { describeWithNginx, startNginx, type Nginx } from "../helpers/nginx.js";

const ROOT = join(import.meta.dirname, "../fixtures/stream-app");

// docs/guides/deployment.md "nginx", with nginx's default buffering instead of `proxy_buffering off`.
const LOCATION = `
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_set_header Host $http_host;
      proxy_buffering on;
      proxy_read_timeout 60s;
`;

describeWithNginx("a stream behind nginx", () => {
  let app: TestServer;
  let nginx: Nginx;
  let viewer: Viewer;
  beforeAll(async () => {
    app = await startServer({ root: ROOT });
    nginx = await startNginx(app.url, LOCATION);
    viewer = await openViewer(nginx.url);
  });
  afterAll(async () => {
    await nginx?.stop();
    await app?.close();
  });

  it("arrives line by line, not when the method ends", async () => {
    const stream = await openStream(nginx.url, "plugin/ticker/count", { viewer, args: [{ n: 3, delayMs: 200 }] });
    const first = await stream.waitFor((record) => record.event?.i === 0);
    // The method is still running: its result has not been written.
    expect(stream.records.some((record) => record.done)).toBe(false);
    await stream.finished;
    const done = stream.records.at(-1)!;
    expect(done).toMatchObject({ done: true, ok: true, result: { count: 3 } });
    expect(done.at - first.at).toBeGreaterThan(250);
    expect(stream.headers["content-type"]).toBe("application/x-ndjson; charset=utf-8");
  });

  it("passes the heartbeats of a silent method through", async () => {
    const stream = await openStream(nginx.url, "plugin/ticker/silent", { viewer, args: [{ ms: 700 }] });
    const ping = await stream.waitFor((record) => record.ping === true);
    expect(stream.records.some((record) => record.done)).toBe(false);
    await stream.finished;
    expect(stream.records.at(-1)!.at - ping.at).toBeGreaterThan(200);
  });
});
