/**
 * `@counterpart-viewer/server/testing` (docs/guides/toolkit.md "Testing your methods"): an app root
 * started in process for tests, its viewers and their calls over Fastify's `inject`, its
 * log events; and one method called with a made-up `ctx`. Nothing of the server's own
 * start imports this folder (test/testing/loading.test.ts holds that).
 *
 * Importing it installs `globalThis.APP_SERVER` when no server did, so that a server file
 * the test imports next may read it as it loads.
 */
import { ensureAppServerGlobal } from "./app-server-global.js";

ensureAppServerGlobal();

export { startTestApp, type TestApp, type TestAppOptions, type ViewerOptions } from "./test-app.js";
export type { TestClient } from "./test-client.js";
export type { ItemClient, UntypedServerFile } from "./item-client.js";
export type {
  AnswerHeaders,
  CallAnswer,
  CallOptions,
  HttpAnswer,
  RequestOptions,
  RpcAnswerBody,
  RpcKind,
  StreamAnswer,
  StreamEnd,
} from "./wire-types.js";
export { RpcCallError } from "./call-error.js";
export { callMethod, makeContext, type CallMethodArgs, type ContextOverrides, type MethodRun, type TestContext } from "./make-context.js";
export { loadServerFile } from "./server-file.js";
export type { LogFilter, LogLine } from "./log-capture.js";
export type { ArgsOf, ConfigOf, EventOf, InputOf, ResultOf, ServerMethod } from "./method-types.js";
