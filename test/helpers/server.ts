/**
 * A real server in this process, listening on port 0 with its log lines captured. Speak to
 * it with ./http.ts; run the real entrypoints with ./process.ts.
 */
import { Writable } from "node:stream";
import { afterAll, beforeAll } from "vitest";
import { createServer, type AppServer, type CreateServerOptions } from "../../dist/index.js";
import { openViewer, type Viewer } from "./http.js";

export const TEST_SESSION_SECRET = "test-session-secret-that-is-32-bytes-long!";

export class LogCapture extends Writable {
  readonly lines: Array<Record<string, unknown>> = [];

  override _write(chunk: Buffer, _encoding: string, done: () => void): void {
    for (const line of chunk.toString("utf8").split("\n")) {
      if (line.trim() === "") continue;
      try {
        this.lines.push(JSON.parse(line) as Record<string, unknown>);
      } catch {
        this.lines.push({ raw: line });
      }
    }
    done();
  }

  events(prefix = "rpc."): Array<Record<string, unknown>> {
    return this.lines.filter((line) => typeof line.event === "string" && (line.event as string).startsWith(prefix));
  }

  /** The events of one request, found by its `reqId`. */
  forRequest(reqId: string): Array<Record<string, unknown>> {
    return this.lines.filter((line) => line.reqId === reqId && typeof line.event === "string");
  }

  text(): string {
    return this.lines.map((line) => JSON.stringify(line)).join("\n");
  }
}

export interface TestServer {
  server: AppServer;
  url: string;
  logs: LogCapture;
  close(): Promise<void>;
}

export async function startServer(options: CreateServerOptions = {}): Promise<TestServer> {
  const logs = new LogCapture();
  const server = await createServer({
    port: 0,
    host: "127.0.0.1",
    logDestination: logs,
    ...options,
    env: { APP_SESSION_SECRET: TEST_SESSION_SECRET, ...options.env },
  });
  const url = await server.listen();
  return { server, url, logs, close: () => server.close() };
}

export interface ServerFixture extends TestServer {
  /** A session on the server, as its viewer page hands it out. */
  viewer: Viewer;
}

/**
 * The server of a test file or `describe`: started before its tests with a viewer session
 * opened on it, closed after them. Its fields are there once `beforeAll` has run.
 */
export function useServer(options: CreateServerOptions = {}): ServerFixture {
  const fixture = {} as ServerFixture;
  beforeAll(async () => {
    Object.assign(fixture, await startServer(options));
    fixture.viewer = await openViewer(fixture.url);
  });
  afterAll(() => fixture.close?.());
  return fixture;
}
