// The RPC echo through the gateway against, in the same run: a raw node:http handler
// (bench/servers/raw-rpc.mjs), a bare Fastify 5 route (bench/servers/fastify-rpc.mjs), and
// the frameworks a user would pick instead of the gateway — tRPC 11 (standalone and Fastify
// adapters) and oRPC 1.x (Node and Fastify adapters, RPC handler; Node adapter, OpenAPI
// handler). Every one does the same session cookie HMAC check and CSRF header check (the
// frameworks in their own middleware) and echoes the same value, each in its own wire format,
// checked with one real call before measuring (wire-check.mjs).
// 50 connections, the same cookie and CSRF header for all; servers pinned to the server
// core, autocannon to the load core (lib.mjs), interleaved rounds, each contender in a
// process of its own per round (lib.mjs interleaved(), `freshProcesses`).
// Targets: gateway CPU per call ≤ 1.33× the Fastify route's; gateway req/s ≥ 0.75× raw's.
import { join } from "node:path";
import { REPO, ROUNDS, ROUND_SEC, gatewayConfigArgs, interleaved, pairedRatio, printTable, ratio, startProcess, target, viewerSession } from "./lib.mjs";
import { checkWire } from "./wire-check.mjs";

const ECHO = { message: "hello, gateway", n: 42, ok: true };
export const BODY = JSON.stringify({ args: [ECHO] }); // ~60 bytes

/** Autocannon options for a session-bound POST of BODY to `path`. */
export async function rpcOptions(server, path, { cookie = true, csrf = true, body = BODY } = {}) {
  const session = await viewerSession(server.url);
  const headers = { "content-type": "application/json" };
  if (cookie) headers.cookie = session.cookie;
  if (csrf) headers["x-app-csrf"] = csrf === true ? session.csrf : csrf;
  return { url: server.url + path, method: "POST", headers, body };
}

// Each contender's wire format for the echo of ECHO: the body it is sent and where its
// answer carries the value back.
const GATEWAY_WIRE = { body: BODY, echoed: (json) => json.result };
const TRPC_WIRE = { body: JSON.stringify(ECHO), echoed: (json) => json.result.data };
const ORPC_RPC_WIRE = { body: JSON.stringify({ json: ECHO }), echoed: (json) => json.json };
const ORPC_OPENAPI_WIRE = { body: JSON.stringify(ECHO), echoed: (json) => json };

function contender(name, start, path, wire = GATEWAY_WIRE) {
  return {
    name,
    start,
    async options(server) {
      await checkWire(name, server, path, wire, ECHO);
      return rpcOptions(server, path, { body: wire.body });
    },
  };
}

const server = (file, env = {}) => () => startProcess(join(REPO, "bench/servers", file), [], env);

export const startGateway = (env = {}) => startProcess(join(REPO, "index.js"), ["--port", "$PORT", "--root", join(REPO, "bench/app"), ...gatewayConfigArgs()], env);

export async function benchRpc() {
  const rows = await interleaved([
    contender("raw node:http", server("raw-rpc.mjs"), "/rpc"),
    contender("bare Fastify route", server("fastify-rpc.mjs"), "/rpc"),
    contender("gateway", () => startGateway(), "/__rpc/plugin/bench/echo"),
    // The same gateway without its per-call log line (the baselines write none): how much
    // of the difference is the structured log.
    contender("gateway, per-call log off", () => startGateway({ APP_LOG_LEVEL: "warn" }), "/__rpc/plugin/bench/echo"),
    contender("tRPC 11, standalone adapter", server("trpc-standalone.mjs"), "/trpc/echo", TRPC_WIRE),
    contender("tRPC 11, Fastify adapter", server("trpc-fastify.mjs"), "/trpc/echo", TRPC_WIRE),
    contender("oRPC 1, Node adapter", server("orpc-node.mjs"), "/rpc/echo", ORPC_RPC_WIRE),
    contender("oRPC 1, Fastify adapter", server("orpc-fastify.mjs"), "/rpc/echo", ORPC_RPC_WIRE),
    contender("oRPC 1, OpenAPI handler (Node)", server("orpc-node.mjs", { BENCH_ORPC_HANDLER: "openapi" }), "/rpc/echo", ORPC_OPENAPI_WIRE),
  ], { freshProcesses: true });
  const [raw, fastify, full, quiet, ...peers] = rows;
  printTable(`RPC echo, ${BODY.length}-byte gateway body, 50 connections, median of ${ROUNDS} interleaved ${ROUND_SEC}-second rounds, a new process per round`, rows);
  const cpuVsFastify = pairedRatio(full, fastify);
  const reqVsRaw = full.reqPerSec / raw.reqPerSec;
  console.log(`\ngateway / bare Fastify, CPU per call: ${cpuVsFastify.toFixed(2)} paired by round (target <= 1.33); of the medians: ${ratio(full.cpuUsPerReq, fastify.cpuUsPerReq)}`);
  console.log(`gateway / raw, CPU per call: ${ratio(full.cpuUsPerReq, raw.cpuUsPerReq)}; bare Fastify / raw: ${ratio(fastify.cpuUsPerReq, raw.cpuUsPerReq)}`);
  console.log(`gateway without the per-call log / bare Fastify, CPU per call: ${ratio(quiet.cpuUsPerReq, fastify.cpuUsPerReq)}`);
  console.log(`gateway / raw req/s: ${ratio(full.reqPerSec, raw.reqPerSec)} (target >= 0.75); gateway / bare Fastify req/s: ${ratio(full.reqPerSec, fastify.reqPerSec)}`);
  console.log("\ngateway / each peer, CPU per call (below 1: the gateway spends less per call):");
  for (const peer of peers) console.log(`- gateway / ${peer.name}: ${ratio(full.cpuUsPerReq, peer.cpuUsPerReq)}`);
  return {
    raw,
    fastify,
    gateway: full,
    quiet,
    peers,
    targets: [
      target("rpc", "gateway / bare Fastify, CPU µs per call", cpuVsFastify, { max: 1.33 }),
      target("rpc", "gateway / raw node:http, req/s", reqVsRaw, { min: 0.75 }),
      target("rpc", "gateway CPU µs per call", full.cpuUsPerReq, {}, { digits: 1 }),
      target("rpc", "bare Fastify CPU µs per call", fastify.cpuUsPerReq, {}, { digits: 1 }),
      target("rpc", "raw node:http CPU µs per call", raw.cpuUsPerReq, {}, { digits: 1 }),
      ...peers.map((peer) => target("rpc", `gateway / ${peer.name}, CPU per call`, full.cpuUsPerReq / peer.cpuUsPerReq)),
    ],
  };
}

if (import.meta.url === `file://${process.argv[1]}`) await benchRpc();
