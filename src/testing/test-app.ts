/**
 * `startTestApp()`: a server for an app root, in this process and without a port. Every
 * request goes through Fastify's `inject`, the same routes and hooks as a real request
 * but no socket, so a test needs no free port and leaves no connection behind. Its log
 * lines are captured in memory.
 */
import { randomBytes } from "node:crypto";
import { fileURLToPath } from "node:url";
import type { FastifyRequest } from "fastify";
import { createServer, type AppServer } from "../app/create-server.js";
import type { AppConfigInput } from "../config/schema.js";
import { SESSION_COOKIE } from "../auth/session.js";
import { LogCapture, type LogFilter, type LogLine } from "./log-capture.js";
import { keepCookies } from "./cookie-jar.js";
import { TestClient } from "./test-client.js";
import type { AnswerHeaders, OutgoingRequest, RawAnswer, Send } from "./wire-types.js";

export interface TestAppOptions {
  /** The app root: a path, or a `file:` URL such as `new URL("..", import.meta.url)`. */
  root: string | URL;
  /** A config object, or the path of a JSON file. Default: `<root>/app.config.json` when it exists. */
  config?: AppConfigInput | string;
  /**
   * What `<% NAME %>` and `secretEnv` read. Default: nothing, not `process.env`, so that a
   * test never picks up the real secrets of the shell it runs in. `APP_SESSION_SECRET` is
   * made up when missing.
   */
  env?: NodeJS.ProcessEnv;
  /** Dev mode (default false, whatever `APP_DEV_MODE` says). */
  dev?: boolean;
  /** A plugin or module that fails to load fails the start (default true). */
  strict?: boolean;
  /** Default `info` (`debug` in dev mode): enough for every call's event. */
  logLevel?: string;
}

export interface ViewerOptions {
  /** The page the viewer loads first (default `/`). */
  page?: string;
}

export interface TestApp {
  /** The server itself (`server.app` is the Fastify instance). */
  readonly server: AppServer;
  /** A caller without a session: public methods, and what a stranger is refused. */
  readonly anonymous: TestClient;
  /**
   * A new viewer: loads its page as a browser does and keeps the session cookie and CSRF
   * token it hands out. An app root with no page at `/` gets its session straight from
   * the server, as the page would have given it.
   */
  viewer(options?: ViewerOptions): Promise<TestClient>;
  /** The server's log lines so far, parsed; filter by `event` or `reqId`. */
  logs(filter?: LogFilter): LogLine[];
  /** Lets in-flight calls finish and releases everything the server holds. */
  close(): Promise<void>;
}

export async function startTestApp(options: TestAppOptions): Promise<TestApp> {
  const env: NodeJS.ProcessEnv = { ...options.env };
  // Made up here rather than left to the server, which would log a warning for it.
  env.APP_SESSION_SECRET ??= randomBytes(32).toString("base64url");
  const dev = options.dev ?? false;
  const logs = new LogCapture();
  const server = await createServer({
    root: typeof options.root === "string" ? options.root : fileURLToPath(options.root),
    config: options.config,
    env,
    dev,
    strict: options.strict ?? true,
    logDestination: logs,
    logLevel: options.logLevel ?? (dev ? "debug" : "info"),
    // A test checks results against `output` whatever the mode, as `callMethod` does.
    validateOutput: true,
  });
  // The request id lives on Fastify's request, which inject's answer does not carry; its
  // raw request is the one inject made, and finds it again.
  const requestIds = new WeakMap<object, string>();
  server.app.addHook("onRequest", (request: FastifyRequest, _reply, done) => {
    requestIds.set(request.raw, request.id);
    done();
  });
  try {
    await server.app.ready();
  } catch (error) {
    await server.close();
    throw error;
  }

  const send: Send = async (request: OutgoingRequest): Promise<RawAnswer> => {
    const answer = await server.app.inject({
      method: request.method as "GET",
      url: request.url,
      headers: request.headers,
      ...(request.payload === undefined ? {} : { payload: request.payload }),
    });
    return { status: answer.statusCode, headers: answer.headers as AnswerHeaders, payload: answer.rawPayload, reqId: requestIds.get(answer.raw.req) ?? "" };
  };

  return {
    server,
    anonymous: new TestClient(send, null),
    async viewer(viewerOptions = {}) {
      const page = viewerOptions.page ?? "/";
      const answer = await send({ method: "GET", url: page, headers: {} });
      const cookies = new Map<string, string>();
      keepCookies(cookies, answer.headers["set-cookie"]);
      const csrf = csrfTokenIn(answer.payload.toString("utf8"));
      if (cookies.has(SESSION_COOKIE) && csrf !== null) return new TestClient(send, { cookies, csrf });
      if (answer.status === 404 && viewerOptions.page === undefined) {
        const { token, session } = server.core.sessions.issue();
        return new TestClient(send, { cookies: new Map([[SESSION_COOKIE, token]]), csrf: server.core.sessions.csrfToken(session) });
      }
      throw new Error(`${page} handed out no viewer session (status ${answer.status}): a viewer page is an HTML file below public/, plugins/ or modules/`);
    },
    logs: (filter) => logs.lines(filter),
    close: () => server.close(),
  };
}

/** The token the page's bootstrap sets (static/viewer-page.ts writes it as a JSON string literal). */
function csrfTokenIn(html: string): string | null {
  const match = /window\.APP_CSRF_TOKEN = ("(?:[^"\\]|\\.)*")/.exec(html);
  return match ? (JSON.parse(match[1]!) as string) : null;
}
