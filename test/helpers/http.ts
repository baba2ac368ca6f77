/**
 * Speaking HTTP to a server under test over real sockets, whatever started it (in this
 * process, `node index.js` or a cluster): a viewer session as the page hands it out, RPC
 * calls, and raw requests with full control of the path, headers and body.
 */
import { request as httpRequest, type IncomingHttpHeaders } from "node:http";
import { createServer as createNetServer } from "node:net";

export interface Viewer {
  cookie: string;
  csrf: string;
}

/**
 * Loads the viewer page like a browser would: returns its session cookie and CSRF token.
 * On a connection of its own, so that a cluster's master may hand it to any worker.
 */
export async function openViewer(url: string, path = "/"): Promise<Viewer> {
  const page = await send(url, path, { headers: { connection: "close" } });
  const setCookie = page.headers["set-cookie"]?.[0] ?? "";
  const cookie = setCookie.split(";")[0]!;
  const match = /window\.APP_CSRF_TOKEN = "([^"]+)"/.exec(page.body);
  if (!cookie.startsWith("app_session=") || !match) throw new Error(`no session from ${path}: ${page.status}`);
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

/** POSTs an RPC call with fetch. `viewer` adds the cookie and the CSRF header. */
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

export interface RawAnswer {
  status: number;
  headers: IncomingHttpHeaders;
  /** The header lines as sent: `[name, value, name, value, ...]`, repeats kept. */
  rawHeaders: string[];
  body: string;
  json: any;
}

export interface RawOptions {
  method?: string;
  viewer?: Viewer | null;
  headers?: Record<string, string | string[]>;
  body?: string | Buffer;
  /** Give up (rejecting with code TIMEOUT) when the answer has not ended by then. */
  timeoutMs?: number;
}

/**
 * One request on a connection of its own, with the path sent byte for byte as given (fetch
 * would normalise `%2e%2e` and `..` away before they reach the server).
 */
export function send(url: string, path: string, options: RawOptions = {}): Promise<RawAnswer> {
  const target = new URL(url);
  const headers: Record<string, string | string[]> = { ...options.headers };
  // Node's client frames a DELETE or OPTIONS body with nothing unless told its length.
  if (options.body !== undefined && headers["transfer-encoding"] === undefined) headers["content-length"] = String(Buffer.byteLength(options.body));
  if (options.viewer) {
    headers.cookie = options.viewer.cookie;
    headers["x-app-csrf"] = options.viewer.csrf;
  }
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: target.hostname, port: target.port, path, method: options.method ?? "GET", headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (chunk: Buffer) => chunks.push(chunk));
      res.on("end", () => {
        const body = Buffer.concat(chunks).toString("utf8");
        let json: unknown = null;
        try {
          json = body === "" ? null : JSON.parse(body);
        } catch {
          json = null;
        }
        resolve({ status: res.statusCode ?? 0, headers: res.headers, rawHeaders: res.rawHeaders, body, json });
      });
      res.on("error", reject);
    });
    if (options.timeoutMs !== undefined) {
      req.setTimeout(options.timeoutMs, () => req.destroy(Object.assign(new Error("request timed out"), { code: "TIMEOUT" })));
    }
    req.on("error", reject);
    req.end(options.body);
  });
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

/** A loopback port nobody listens on: connecting is refused, and a test may listen on it. */
export async function closedPort(): Promise<number> {
  const server = createNetServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}
