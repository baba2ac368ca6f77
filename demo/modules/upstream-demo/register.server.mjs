// Demo only. Boot hook: starts a tiny upstream API on loopback so that `npm start` has
// something behind the two demo proxy aliases of app.config.json:
//   /proxy/demo-api/...     static API key only (auth.enabled: false)
//   /proxy/demo-secure/...  API key plus a viewer JWT checked by the built-in `jwt` verifier
// The upstream answers only requests carrying the API key, which only the proxy adds, and
// echoes what reached it. Its port is DEMO_UPSTREAM_PORT (default 8089); the baseUrls in
// app.config.json name 8089, so change both together.
import { timingSafeEqual } from "node:crypto";
import { createRequire } from "node:module";

// require(), not `import … from "node:http"`: on Node 22 and 24 an ES module import of
// node:http reads every export, `WebSocket` among them, which loads Node's bundled undici
// (about 1.5 MB of heap) into a server that never uses it.
const { createServer } = createRequire(import.meta.url)("node:http");

const STARTED = Symbol.for("counterpart.demo.upstream");
const MAX_ECHO_BYTES = 64 * 1024;

export function register(api) {
  // Boot hooks run once per server; a process that starts several servers (tests) or
  // reloads keeps the one upstream it has.
  if (globalThis[STARTED]) return;
  const port = Number(process.env.DEMO_UPSTREAM_PORT ?? 8089);
  const expectedKey = Buffer.from(String(api.config?.upstreamApiKey ?? ""));
  const server = createServer((req, res) => answer(req, res, expectedKey));
  globalThis[STARTED] = server;
  // Never what keeps the process alive: the server exits as if this did not exist.
  server.unref();
  server.on("connection", (socket) => socket.unref());
  server.on("error", (error) => {
    globalThis[STARTED] = undefined;
    api.log.warn({ port, code: error.code }, `demo upstream not started on 127.0.0.1:${port} (${error.code ?? error.message}); the demo proxy aliases will answer 502`);
  });
  server.listen(port, "127.0.0.1", () => api.log.info({ port }, `demo upstream ready at http://127.0.0.1:${port} (serves the demo proxy aliases)`));
}

function answer(req, res, expectedKey) {
  const given = Buffer.from(String(req.headers["x-api-key"] ?? ""));
  const keyOk = expectedKey.length > 0 && given.length === expectedKey.length && timingSafeEqual(given, expectedKey);
  if (!keyOk) {
    req.resume();
    return send(res, 401, { error: "missing or wrong x-api-key: call me through /proxy/demo-api or /proxy/demo-secure" });
  }
  let bodyBytes = 0;
  req.on("data", (chunk) => {
    bodyBytes += chunk.length;
    if (bodyBytes > MAX_ECHO_BYTES) req.destroy();
  });
  req.on("end", () => {
    const url = new URL(req.url ?? "/", "http://upstream.invalid");
    send(res, 200, {
      upstream: "counterpart demo upstream",
      method: req.method,
      path: url.pathname,
      query: allValues(url.searchParams),
      bodyBytes,
      apiKeyReceived: true,
      user: req.headers["x-user"] ?? null,
      authorizationForwarded: req.headers.authorization !== undefined,
      forwardedFor: req.headers["x-forwarded-for"] ?? null,
      time: new Date().toISOString(),
    });
  });
}

// `?tag=a&tag=b` → { tag: ["a", "b"] }: Object.fromEntries kept only the last value, so
// the demo showed "b" for a call that sent both.
function allValues(params) {
  const query = {};
  for (const key of new Set(params.keys())) {
    const values = params.getAll(key);
    query[key] = values.length === 1 ? values[0] : values;
  }
  return query;
}

function send(res, status, body) {
  const text = JSON.stringify(body);
  res.writeHead(status, { "content-type": "application/json; charset=utf-8", "content-length": Buffer.byteLength(text), "cache-control": "no-store" });
  res.end(text);
}
