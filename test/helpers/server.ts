/**
 * Test helpers: a real server listening on port 0, its log lines captured, and small
 * HTTP helpers that speak to it over real sockets.
 */
import { Writable } from "node:stream";
import { request as httpRequest } from "node:http";
import { createServer, type AppServer, type CreateServerOptions } from "../../dist/index.js";

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

export interface Viewer {
  cookie: string;
  csrf: string;
}

/** Loads the viewer page like a browser would: returns its session cookie and CSRF token. */
export async function openViewer(url: string, path = "/"): Promise<Viewer> {
  const response = await fetch(url + path);
  const html = await response.text();
  const setCookie = response.headers.get("set-cookie") ?? "";
  const cookie = setCookie.split(";")[0]!;
  const match = /window\.APP_CSRF_TOKEN = "([^"]+)"/.exec(html);
  if (!cookie.startsWith("app_session=") || !match) throw new Error(`no session from ${path}: ${response.status}`);
  return { cookie, csrf: match[1]! };
}

export interface RpcAnswer {
  status: number;
  body: any;
  headers: Headers;
}

export interface RpcOptions {
  viewer?: Viewer | null;
  body?: unknown;
  rawBody?: string | Buffer;
  headers?: Record<string, string>;
  method?: string;
}

/** POSTs an RPC call. `viewer` adds the cookie and the CSRF header. */
export async function rpc(url: string, path: string, options: RpcOptions = {}): Promise<RpcAnswer> {
  const headers: Record<string, string> = { "content-type": "application/json", ...options.headers };
  if (options.viewer) {
    headers.cookie = options.viewer.cookie;
    headers["x-app-csrf"] = options.viewer.csrf;
  }
  const method = options.method ?? "POST";
  const body =
    method === "GET" || method === "HEAD"
      ? undefined
      : (options.rawBody ?? JSON.stringify(options.body ?? { args: [] }));
  const response = await fetch(`${url}/__rpc/${path}`, { method, headers, body });
  const text = await response.text();
  let parsed: unknown = text;
  try {
    parsed = text === "" ? null : JSON.parse(text);
  } catch {
    // not JSON: keep the text
  }
  return { status: response.status, body: parsed, headers: response.headers };
}

/** A raw HTTP request with full control of headers and body chunks (for size limits). */
export function rawRequest(
  url: string,
  options: { path: string; method?: string; headers?: Record<string, string | number>; chunks?: Array<string | Buffer>; endBody?: boolean },
): Promise<{ status: number; body: string; headers: Record<string, unknown> }> {
  const target = new URL(url);
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      { host: target.hostname, port: target.port, path: options.path, method: options.method ?? "POST", headers: options.headers },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (chunk: Buffer) => chunks.push(chunk));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString("utf8"), headers: res.headers }));
        res.on("error", reject);
      },
    );
    req.on("error", (error) => {
      // The server may close the socket after answering an oversized upload.
      if ((error as NodeJS.ErrnoException).code !== "EPIPE" && (error as NodeJS.ErrnoException).code !== "ECONNRESET") reject(error);
    });
    for (const chunk of options.chunks ?? []) req.write(chunk);
    if (options.endBody !== false) req.end();
    else req.flushHeaders();
  });
}
