// Session data on the RPC path (docs/guides/sessions-and-state.md): the RPC echo, and a method that
// reads and writes its session's data on every call (bench/app/plugins/bench/session.server.mjs),
// each on a gateway keeping session data in its own memory and on one keeping it in a real
// redis-server (started here with no persistence, on the load core: it stands for a Redis on
// another machine). Servers pinned to the server core, autocannon on the load core,
// 50 connections, interleaved rounds (lib.mjs).
// Reported: server CPU µs per call and req/s of each; with Redis, redis-server's own CPU per call.
import { ROUNDS, ROUND_SEC, borrowed, cpuMicros, interleaved, load, printTable, ratio, target } from "./lib.mjs";
import { rpcOptions } from "./rpc.mjs";
import { withMemoryAndRedisGateways } from "./redis.mjs";

const ECHO = "/__rpc/plugin/bench/echo";
const COUNTER = "/__rpc/plugin/bench/counter";

export async function benchSession() {
  return withMemoryAndRedisGateways(async ({ memory, shared, redis }) => {
    const on = (server) => async () => borrowed(server);
    const rows = await interleaved([
      { name: "echo, memory store", start: on(memory), options: (server) => rpcOptions(server, ECHO) },
      { name: "session read + write, memory store", start: on(memory), options: (server) => rpcOptions(server, COUNTER) },
      { name: "echo, Redis store", start: on(shared), options: (server) => rpcOptions(server, ECHO) },
      { name: "session read + write, Redis store", start: on(shared), options: (server) => rpcOptions(server, COUNTER) },
    ]);
    printTable(`Session data per call, 50 connections, one viewer session each, median of ${ROUNDS} interleaved ${ROUND_SEC}-second rounds`, rows);
    const [echoMemory, counterMemory, echoRedis, counterRedis] = rows;

    const options = await rpcOptions(shared, COUNTER);
    const before = cpuMicros(redis.pid);
    const result = await load({ ...options, duration: ROUND_SEC });
    const redisUsPerCall = (cpuMicros(redis.pid) - before) / result.requests.total;
    console.log("");
    console.log(`read + write / echo, CPU per call: memory ${ratio(counterMemory.cpuUsPerReq, echoMemory.cpuUsPerReq)}, Redis ${ratio(counterRedis.cpuUsPerReq, echoRedis.cpuUsPerReq)}`);
    console.log(`Redis / memory, CPU per call: echo ${ratio(echoRedis.cpuUsPerReq, echoMemory.cpuUsPerReq)}, read + write ${ratio(counterRedis.cpuUsPerReq, counterMemory.cpuUsPerReq)}`);
    console.log(`redis-server CPU µs per read + write call: ${redisUsPerCall.toFixed(1)}`);
    return {
      rows,
      targets: [
        target("session", "memory store, session read + write: gateway CPU µs per call", counterMemory.cpuUsPerReq, {}, { digits: 1 }),
        target("session", "memory store, echo: gateway CPU µs per call", echoMemory.cpuUsPerReq, {}, { digits: 1 }),
        target("session", "Redis store, session read + write: gateway CPU µs per call", counterRedis.cpuUsPerReq, {}, { digits: 1 }),
        target("session", "Redis store, echo (the load only): gateway CPU µs per call", echoRedis.cpuUsPerReq, {}, { digits: 1 }),
        target("session", "redis-server CPU µs per read + write call", redisUsPerCall, {}, { digits: 1 }),
      ],
    };
  });
}

if (import.meta.url === `file://${process.argv[1]}`) await benchSession();
