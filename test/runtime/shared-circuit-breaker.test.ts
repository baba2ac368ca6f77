// docs/guides/server-methods.md "Runtime protections", shared circuit breakers (docs/guides/deployment.md "Shared state and
// Redis"): two stores on two connections to one real redis-server stand for two processes.
// Failures count together, an open breaker refuses on both, exactly one trial runs in the
// deployment, a closed breaker admits without a round trip, and without Redis each process
// falls back to its own breaker. (Over real processes: test/runtime/deployment-state.test.ts.)
import { afterAll, beforeAll, expect, it } from "vitest";
import { Redis } from "ioredis";
import { createLogger } from "../../dist/log/logger.js";
import { RedisConnection } from "../../dist/state/redis-connection.js";
import { RedisBreakerStore } from "../../dist/state/redis-breaker-store.js";
import { SharedCircuitBreakers, type SharedCircuitBreaker } from "../../dist/runtime/shared-circuit-breaker.js";
import type { HttpError } from "../../dist/errors/http-error.js";
import { describeWithRedis, useRedis } from "../helpers/redis.js";
import { LogCapture } from "../helpers/server.js";
import { waitFor } from "../helpers/wait.js";

const RESET_MS = 300;
const LEASE_MS = 5_000;

interface Process {
  connection: RedisConnection;
  breakers: SharedCircuitBreakers;
  logs: LogCapture;
}

function process(url: string): Process {
  const logs = new LogCapture();
  const { logger } = createLogger({ dev: false, destination: logs, secrets: [] });
  const connection = new RedisConnection({ url, keyPrefix: "bt:", commandTimeoutMs: 500, leaseMs: 10_000 }, logger);
  return { connection, breakers: new SharedCircuitBreakers(new RedisBreakerStore(connection, logger)), logs };
}

/** Admits like the runtime does: at once, or after a claim from the store. */
async function admit(breaker: SharedCircuitBreaker): Promise<boolean | HttpError> {
  try {
    return await breaker.admit();
  } catch (error) {
    return error as HttpError;
  }
}

/** Records and waits until the store's answer reached the view. */
async function record(breaker: SharedCircuitBreaker, outcome: "success" | "failure" | "neutral", isTrial = false, expected?: string) {
  breaker.record(outcome, isTrial);
  if (expected) await waitFor(() => breaker.state === expected, 2_000, `state ${expected}`);
  else await new Promise((resolve) => setTimeout(resolve, 30));
}

describeWithRedis("shared circuit breakers", () => {
  const redis = useRedis();
  let a: Process;
  let b: Process;
  let raw: Redis;
  let n = 0;
  /** A fresh breaker key on both processes for each test. */
  const pair = (threshold = 2) => {
    const key = `upstream-${++n}`;
    return [a.breakers.for(key, threshold, RESET_MS, LEASE_MS), b.breakers.for(key, threshold, RESET_MS, LEASE_MS)] as const;
  };

  beforeAll(async () => {
    a = process(redis.url);
    b = process(redis.url);
    raw = new Redis(redis.url);
    raw.on("error", () => {});
    expect(await a.connection.whenReady(5_000)).toBe(true);
    expect(await b.connection.whenReady(5_000)).toBe(true);
  });
  afterAll(async () => {
    raw.disconnect();
    await a.connection.close();
    await b.connection.close();
  });

  it("counts the failures of both processes together and opens on both", async () => {
    const [onA, onB] = pair();
    await new Promise((resolve) => setTimeout(resolve, 50)); // the subscriptions
    await record(onA, "failure");
    expect(onA.state).toBe("closed");
    await record(onB, "failure", false, "open");
    await waitFor(() => onA.state === "open", 2_000, "A to hear the breaker opened");
    const refusal = (await admit(onA)) as HttpError;
    expect([refusal.status, refusal.code]).toEqual([503, "RPC_CIRCUIT_OPEN"]);
    expect(refusal.details.retryAfterMs).toBeGreaterThan(0);
    expect(refusal.details.retryAfterMs).toBeLessThanOrEqual(RESET_MS);
  });

  it("lets exactly one call of the deployment run the trial, whose success closes the breaker everywhere", async () => {
    const [onA, onB] = pair();
    await record(onA, "failure");
    await record(onA, "failure", false, "open");
    await waitFor(() => onB.state === "open", 2_000, "B to hear it");
    await new Promise((resolve) => setTimeout(resolve, RESET_MS + 20));
    const admitted = await Promise.all([admit(onA), admit(onB), admit(onA), admit(onB)]);
    expect(admitted.filter((result) => result === true)).toHaveLength(1);
    expect(admitted.filter((result) => typeof result === "object" && (result as HttpError).code === "RPC_CIRCUIT_OPEN")).toHaveLength(3);
    const trialOn = admitted.indexOf(true) % 2 === 0 ? onA : onB;
    const other = trialOn === onA ? onB : onA;
    // While the trial runs, the other process refuses too (its claim fails in the store).
    expect(await admit(other)).toMatchObject({ code: "RPC_CIRCUIT_OPEN" });
    await record(trialOn, "success", true, "closed");
    await waitFor(() => other.state === "closed", 2_000, "the other process to hear it closed");
    expect([await admit(onA), await admit(onB)]).toEqual([false, false]);
  });

  it("reopens after a failed trial, and hands the trial on at once when it proved nothing", async () => {
    const [onA, onB] = pair(1);
    await record(onA, "failure", false, "open");
    await new Promise((resolve) => setTimeout(resolve, RESET_MS + 20));
    expect(await admit(onA)).toBe(true);
    await record(onA, "failure", true, "open");
    await waitFor(() => onB.state === "open", 2_000, "B to hear it reopened");
    expect(await admit(onB)).toMatchObject({ code: "RPC_CIRCUIT_OPEN" });
    await new Promise((resolve) => setTimeout(resolve, RESET_MS + 20));
    expect(await admit(onB)).toBe(true);
    // The client left: the trial goes to the next call, here on the other process.
    await record(onB, "neutral", true);
    await waitFor(async () => (await admit(onA)) === true, 2_000, "A to claim the trial");
  });

  it("refuses from its first call a breaker that other processes opened before this one used it", async () => {
    const key = `upstream-${++n}`;
    const onA = a.breakers.for(key, 2, 5_000, LEASE_MS);
    await record(onA, "failure");
    await record(onA, "failure", false, "open");
    // B has never seen this key: its first call must not reach the upstream.
    const onB = b.breakers.for(key, 2, 5_000, LEASE_MS);
    const refusal = (await admit(onB)) as HttpError;
    expect([refusal.status, refusal.code]).toEqual([503, "RPC_CIRCUIT_OPEN"]);
    expect(refusal.details.retryAfterMs).toBeGreaterThan(4_000);
  });

  it("catches up on what it missed while disconnected before it admits a call again", async () => {
    const key = `upstream-${++n}`;
    const onA = a.breakers.for(key, 2, 5_000, LEASE_MS);
    const onB = b.breakers.for(key, 2, 5_000, LEASE_MS);
    expect(await admit(onB)).toBe(false);
    // Both of B's connections drop; while B reconnects (50 ms later), A opens the breaker
    // through its store: B hears nothing of it.
    const store = new RedisBreakerStore(a.connection, createLogger({ dev: false, destination: new LogCapture() }).logger);
    const dropped = new Promise((resolve) => b.connection.client.once("close", resolve));
    // The first call B admits once connected again, before any read of its could answer.
    const first = new Promise<boolean | HttpError>((resolve) => b.connection.client.once("ready", () => resolve(admit(onB))));
    const ports = [b.connection.client.stream.localPort, b.connection.subscriber().stream.localPort];
    for (const port of ports) await raw.client("KILL", "ADDR", `127.0.0.1:${port}`);
    await dropped;
    await store.record(key, "failure", null, 2, 5_000);
    expect(await store.record(key, "failure", null, 2, 5_000)).toMatchObject({ state: "open" });
    expect(b.connection.ready).toBe(false);
    expect(await first).toMatchObject({ status: 503, code: "RPC_CIRCUIT_OPEN" });
  });

  it("lets another process claim the trial once a claim's lease lapses (its holder died)", async () => {
    const store = new RedisBreakerStore(a.connection, createLogger({ dev: false, destination: new LogCapture() }).logger);
    const other = new RedisBreakerStore(b.connection, createLogger({ dev: false, destination: new LogCapture() }).logger);
    const key = `upstream-${++n}`;
    expect(await store.record(key, "failure", null, 1, 50)).toMatchObject({ state: "open", failures: 1 });
    await new Promise((resolve) => setTimeout(resolve, 60));
    expect(await store.claimTrial(key, 200)).toMatchObject({ granted: true });
    // The holder never records its outcome.
    expect(await other.claimTrial(key, 200)).toMatchObject({ granted: false, view: { state: "trial" } });
    await new Promise((resolve) => setTimeout(resolve, 220));
    expect(await other.claimTrial(key, 200)).toMatchObject({ granted: true });
  });

  it("clears the count on a success anywhere: failures must be consecutive", async () => {
    const [onA, onB] = pair(2);
    await record(onA, "failure");
    await waitFor(() => onB.failures === 1, 2_000, "B to hear the count started");
    await record(onB, "success");
    await waitFor(() => onA.failures === 0, 2_000, "A to hear it cleared");
    await record(onA, "failure");
    expect(onA.state).toBe("closed");
  });

  it("admits and records successes of a closed breaker without a round trip to Redis", async () => {
    const [onA] = pair();
    await new Promise((resolve) => setTimeout(resolve, 50));
    const processed = async () => Number(/total_commands_processed:(\d+)/.exec(await raw.info("stats"))![1]);
    const before = await processed();
    for (let i = 0; i < 100; i++) {
      expect(onA.admit()).toBe(false);
      onA.record("success", false);
    }
    await new Promise((resolve) => setTimeout(resolve, 30));
    // Only the INFO commands themselves.
    expect((await processed()) - before).toBe(1);
  });

  it("falls back to each process's own breaker while Redis is away, says so once, and shares again when it returns", async () => {
    const [onA, onB] = pair(2);
    await redis.kill();
    await waitFor(() => !a.connection.ready && !b.connection.ready, 2_000, "both to see Redis gone");
    expect(onA.admit()).toBe(false);
    onA.record("failure", false);
    onA.record("failure", false);
    expect(onA.state).toBe("open");
    // B counted nothing: the breakers are per process now.
    expect([onB.state, onB.admit()]).toEqual(["closed", false]);
    const fallbacks = a.logs.lines.filter((line) => String(line.msg).startsWith("circuit breakers cannot reach Redis"));
    expect(fallbacks).toHaveLength(1);
    await new Promise((resolve) => setTimeout(resolve, RESET_MS + 20));
    // The trial is this process's own, without Redis.
    expect(onA.admit()).toBe(true);
    expect(onA.admit()).toMatchObject({ code: "RPC_CIRCUIT_OPEN" });
    await redis.restart();
    await waitFor(() => a.connection.ready && b.connection.ready, 5_000, "both to reconnect");
    // Redis's state (empty after the restart) takes over again.
    await waitFor(() => onA.state === "closed", 2_000, "A to take Redis's state again");
    onA.record("failure", true);
    await record(onB, "failure", false);
    await record(onA, "failure", false, "open");
    await waitFor(() => onB.state === "open", 2_000, "B to hear it over Redis again");
  });
});
