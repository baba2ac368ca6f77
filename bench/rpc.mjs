// The RPC echo through the gateway against two baselines in the same run: a raw node:http
// handler (bench/servers/raw-rpc.mjs) and a bare Fastify 5 route (bench/servers/fastify-rpc.mjs),
// both doing the same session cookie HMAC check, CSRF header check and JSON round trip.
// 50 connections, the same ~60-byte JSON body, cookie and CSRF header for all; servers pinned
// to the server core, autocannon to the load core (lib.mjs), interleaved rounds.
// Targets: gateway CPU per call ≤ 1.33× the Fastify route's; gateway req/s ≥ 0.75× raw's.
import { join } from "node:path";
import { REPO, ROUNDS, ROUND_SEC, gatewayConfigArgs, interleaved, printTable, ratio, startProcess, target, viewerSession } from "./lib.mjs";

export const BODY = JSON.stringify({ args: [{ message: "hello, gateway", n: 42, ok: true }] }); // ~60 bytes

/** Autocannon options for a session-bound POST of BODY to `path`. */
export async function rpcOptions(server, path, { cookie = true, csrf = true, body = BODY } = {}) {
  const session = await viewerSession(server.url);
  const headers = { "content-type": "application/json" };
  if (cookie) headers.cookie = session.cookie;
  if (csrf) headers["x-app-csrf"] = csrf === true ? session.csrf : csrf;
  return { url: server.url + path, method: "POST", headers, body };
}

function contender(name, start, path) {
  return { name, start, options: (server) => rpcOptions(server, path) };
}

export const startGateway = (env = {}) => startProcess(join(REPO, "index.js"), ["--port", "$PORT", "--root", join(REPO, "bench/app"), ...gatewayConfigArgs()], env);

export async function benchRpc() {
  const [raw, fastify, full, quiet] = await interleaved([
    contender("raw node:http", () => startProcess(join(REPO, "bench/servers/raw-rpc.mjs"), []), "/rpc"),
    contender("bare Fastify route", () => startProcess(join(REPO, "bench/servers/fastify-rpc.mjs"), []), "/rpc"),
    contender("gateway", () => startGateway(), "/__rpc/plugin/bench/echo"),
    // The same gateway without its per-call log line (the baselines write none): how much
    // of the difference is the structured log.
    contender("gateway, per-call log off", () => startGateway({ APP_LOG_LEVEL: "warn" }), "/__rpc/plugin/bench/echo"),
  ]);
  printTable(`RPC echo, ${BODY.length}-byte body, 50 connections, median of ${ROUNDS} interleaved ${ROUND_SEC}-second rounds`, [raw, fastify, full, quiet]);
  const cpuVsFastify = full.cpuUsPerReq / fastify.cpuUsPerReq;
  const reqVsRaw = full.reqPerSec / raw.reqPerSec;
  console.log(`\ngateway / bare Fastify, CPU per call: ${ratio(full.cpuUsPerReq, fastify.cpuUsPerReq)} (target <= 1.33)`);
  console.log(`gateway / raw, CPU per call: ${ratio(full.cpuUsPerReq, raw.cpuUsPerReq)}; bare Fastify / raw: ${ratio(fastify.cpuUsPerReq, raw.cpuUsPerReq)}`);
  console.log(`gateway without the per-call log / bare Fastify, CPU per call: ${ratio(quiet.cpuUsPerReq, fastify.cpuUsPerReq)}`);
  console.log(`gateway / raw req/s: ${ratio(full.reqPerSec, raw.reqPerSec)} (target >= 0.75); gateway / bare Fastify req/s: ${ratio(full.reqPerSec, fastify.reqPerSec)}`);
  return {
    raw,
    fastify,
    gateway: full,
    quiet,
    targets: [
      target("rpc", "gateway / bare Fastify, CPU µs per call", cpuVsFastify, { max: 1.33 }),
      target("rpc", "gateway / raw node:http, req/s", reqVsRaw, { min: 0.75 }),
      target("rpc", "gateway CPU µs per call", full.cpuUsPerReq, {}, { digits: 1 }),
      target("rpc", "bare Fastify CPU µs per call", fastify.cpuUsPerReq, {}, { digits: 1 }),
      target("rpc", "raw node:http CPU µs per call", raw.cpuUsPerReq, {}, { digits: 1 }),
    ],
  };
}

if (import.meta.url === `file://${process.argv[1]}`) await benchRpc();
