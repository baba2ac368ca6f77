// Rate limits on the RPC echo (docs/guides/server-methods.md "Rate limits"): the echo with no limit against the
// same echo under a per-session limit too large to refuse in a round, counted in the
// process's memory and, on a second gateway, in a real redis-server (started here on the
// load core, as in bench/session.mjs); and a refused call (429 RPC_RATE_LIMITED: one call a
// day per session, spent before the rounds) against the 200 echo, CPU per answer. Undici
// loops for every row (lib.mjs undiciLoad), as in bench/refusals.mjs: a refusal answered
// before the body is read may close its connection.
// Targets: a 429 costs ≤ 1.0× a 200 in CPU per answer; the rest reported.
import { BODY, rpcOptions } from "./rpc.mjs";
import { ROUNDS, ROUND_SEC, borrowed, interleaved, pairedRatio, printTable, ratio, target } from "./lib.mjs";
import { withMemoryAndRedisGateways } from "./redis.mjs";

const PATH = "/__rpc/plugin/bench/";

/** Spends the session's one call, so that every later call of the round is refused. */
async function spent(server) {
  const options = await rpcOptions(server, PATH + "echoLimitedOut");
  for (let attempt = 0; attempt < 2; attempt += 1) {
    const response = await fetch(options.url, { method: "POST", headers: options.headers, body: BODY });
    await response.arrayBuffer();
    if (response.status === 429) return options;
  }
  throw new Error("echoLimitedOut did not refuse");
}

export async function benchRateLimit() {
  return withMemoryAndRedisGateways(async ({ memory, shared }) => {
    const on = (server) => async () => borrowed(server);
    const rows = await interleaved(
      [
        { name: "200 echo, no limit", start: on(memory), options: (server) => rpcOptions(server, PATH + "echo") },
        { name: "200 echo, per-session limit in memory", start: on(memory), options: (server) => rpcOptions(server, PATH + "echoLimited") },
        { name: "429 RPC_RATE_LIMITED", start: on(memory), options: (server) => spent(server) },
        { name: "200 echo, no limit (Redis gateway)", start: on(shared), options: (server) => rpcOptions(server, PATH + "echo") },
        { name: "200 echo, per-session limit on Redis", start: on(shared), options: (server) => rpcOptions(server, PATH + "echoLimitedShared") },
      ].map((contender) => ({ ...contender, client: "undici" })),
    );
    printTable(`Rate limits on the RPC echo, 50 connections, median of ${ROUNDS} interleaved ${ROUND_SEC}-second rounds`, rows);
    const [plain, limited, refused, plainRedis, limitedRedis] = rows;
    console.log("");
    console.log(`per-session limit in memory − none, CPU µs per call: ${(limited.cpuUsPerReq - plain.cpuUsPerReq).toFixed(1)}`);
    console.log(`per-session limit on Redis − none (same gateway), CPU µs per call: ${(limitedRedis.cpuUsPerReq - plainRedis.cpuUsPerReq).toFixed(1)}`);
    console.log(`429 / 200 echo, CPU per answer: ${pairedRatio(refused, plain).toFixed(2)} paired by round (target <= 1.0); of the medians: ${ratio(refused.cpuUsPerReq, plain.cpuUsPerReq)}`);
    return {
      rows,
      targets: [
        target("ratelimit", "200 echo, no limit: CPU µs per call", plain.cpuUsPerReq, {}, { digits: 1 }),
        target("ratelimit", "per-session limit in memory − no limit, CPU µs per call", limited.cpuUsPerReq - plain.cpuUsPerReq, {}, { digits: 1 }),
        target("ratelimit", "per-session limit on Redis − no limit, CPU µs per call", limitedRedis.cpuUsPerReq - plainRedis.cpuUsPerReq, {}, { digits: 1 }),
        target("ratelimit", "429 RPC_RATE_LIMITED / 200 echo, CPU µs per answer (paired by round)", pairedRatio(refused, plain), { max: 1.0 }),
      ],
    };
  });
}
