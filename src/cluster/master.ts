/**
 * The cluster master (`node cluster-index.js`): checks what can be checked once (flags,
 * `APP_WORKERS`, the root, the config, the session secret) before it forks, then keeps
 * `APP_WORKERS` workers serving one shared port through `node:cluster`.
 *
 * - Ready: one "listening on <url>" line, once every worker listens.
 * - A worker that cannot start (StartupError: bad plugin, port in use, …) stops the master
 *   with that one line and exit 1: the next worker would fail alike.
 * - A worker that dies later is replaced after a backoff; a crash loop stops the master
 *   with exit 1 (see restart-policy.ts).
 * - SIGTERM/SIGINT: forwarded to every worker, which finishes its calls within
 *   `server.shutdownTimeoutMs`; the master exits 0 once they are gone.
 * The session secret, when `APP_SESSION_SECRET` is unset, is made here and handed to every
 * worker through its environment, so a session works whichever worker answers.
 */
import cluster from "node:cluster";
import { resolve } from "node:path";
import { sessionSecretFrom } from "../auth/session.js";
import { readCliOptions } from "../cli/options.js";
import { packageVersion } from "../cli/version.js";
import type { ResolvedConfig } from "../config/resolve.js";
import { StartupError } from "../errors/http-error.js";
import { createLogger, type Logger } from "../log/logger.js";
import { DEMO_ROOT, checkRoot, readConfig } from "../app/create-server.js";
import { IpcChannel, isClusterMessage, type ClusterMessage } from "./ipc.js";
import { MasterServices, type WorkerHandle } from "./master-services.js";
import { MemorySessionStore } from "../state/memory-session-store.js";
import { CLUSTER_USAGE, readWorkerCount } from "./options.js";
import { RestartPolicy } from "./restart-policy.js";
import { DEV_CONSOLE_PATH } from "../static/dev-console.js";

/** Beyond the workers' own shutdown limit, how long the master waits before killing them. */
const STOP_GRACE_MS = 2_000;

interface MasterSetup {
  workers: number;
  root: string;
  dev: boolean;
  config: ResolvedConfig;
  env: NodeJS.ProcessEnv;
  secret: string;
  secretGenerated: boolean;
}

export async function runMaster(argv: string[], env: NodeJS.ProcessEnv): Promise<void> {
  let setup: MasterSetup;
  try {
    const options = readCliOptions(argv, env);
    if (options === "help") {
      process.stdout.write(CLUSTER_USAGE + "\n");
      return;
    }
    if (options === "version") {
      process.stdout.write(packageVersion() + "\n");
      return;
    }
    const workers = readWorkerCount(env);
    const root = resolve(options.root ?? DEMO_ROOT);
    await checkRoot(root);
    const config = await readConfig(root, options.config, env);
    const { secret, generated } = sessionSecretFrom(env);
    setup = { workers, root, dev: options.dev, config, env, secret, secretGenerated: generated };
  } catch (error) {
    const message = error instanceof StartupError ? error.message : (error as Error)?.stack ?? String(error);
    process.stderr.write(`counterpart: ${message}\n`);
    process.exitCode = 1;
    return;
  }
  new Master(setup).start();
}

class Master {
  readonly #setup: MasterSetup;
  readonly #log: Logger;
  readonly #services: MasterServices;
  readonly #handles = new Map<number, WorkerHandle>();
  readonly #restarts = new RestartPolicy();
  readonly #timers = new Set<NodeJS.Timeout>();
  readonly #startedAt = Date.now();
  #phase: "starting" | "running" | "stopping" = "starting";
  #exitCode = 0;

  constructor(setup: MasterSetup) {
    this.#setup = setup;
    const { logger, ringBuffer } = createLogger({
      dev: setup.dev,
      level: setup.env.APP_LOG_LEVEL,
      devLogMaxEntries: Number(setup.env.APP_DEV_LOG_MAX_ENTRIES) || 10_000,
      secrets: [...setup.config.secrets, setup.secret],
    });
    this.#log = logger.child({ role: "master" });
    this.#services = new MasterServices(
      {
        startedAt: this.#startedAt,
        workersWanted: setup.workers,
        restarts: () => this.#restarts.total,
        handles: () => [...this.#handles.values()],
      },
      ringBuffer,
      this.#log,
      setup.config.redis ? null : new MemorySessionStore(setup.config.session.maxEntries, setup.config.session.maxBytes),
    );
  }

  start(): void {
    if (this.#setup.secretGenerated) {
      this.#log.warn("APP_SESSION_SECRET is not set: using a random secret shared by the workers, so sessions end when the cluster restarts");
    }
    process.on("SIGTERM", () => this.#stop("SIGTERM", 0));
    process.on("SIGINT", () => this.#stop("SIGINT", 0));
    this.#log.info({ workers: this.#setup.workers, root: this.#setup.root, dev: this.#setup.dev }, `starting ${this.#setup.workers} workers`);
    for (let i = 0; i < this.#setup.workers; i++) this.#fork();
  }

  #fork(): void {
    const env: NodeJS.ProcessEnv = { ...this.#setup.env, APP_SESSION_SECRET: this.#setup.secret };
    const worker = cluster.fork(env);
    const handle: WorkerHandle = {
      worker,
      channel: new IpcChannel((message) => {
        if (worker.isConnected()) worker.send(message);
      }),
      state: "starting",
      forkedAt: Date.now(),
    };
    this.#services.serve(handle.channel);
    this.#handles.set(worker.id, handle);
    worker.on("message", (message: unknown) => {
      if (isClusterMessage(message)) this.#onMessage(handle, message);
    });
    worker.on("exit", (code, signal) => this.#onExit(handle, code, signal));
    // A send racing the worker's death fails with ERR_IPC_CHANNEL_CLOSED; unheard, that
    // error event would take the master down with it. The exit event does the cleanup.
    worker.on("error", (error: Error) => this.#log.warn({ workerPid: worker.process.pid, err: error }, "worker channel error"));
  }

  #onMessage(handle: WorkerHandle, message: ClusterMessage): void {
    switch (message.type) {
      case "counterpart:log":
        this.#services.addLogLine(message.line);
        return;
      case "counterpart:ready":
        this.#onReady(handle, message.url);
        return;
      case "counterpart:startup-failed":
        // At start, a worker that cannot start means none can: stop with its one line.
        // A replacement that fails later is a crash like any other (its exit follows), so
        // a passing failure does not take the healthy workers down; the crash-loop limit decides.
        if (this.#phase === "running") {
          this.#log.error({ workerPid: handle.worker.process.pid }, `replacement worker failed to start: ${message.message}`);
          return;
        }
        handle.state = "stopping";
        this.#fatal(message.message);
        return;
      default:
        handle.channel.receive(message);
    }
  }

  #onReady(handle: WorkerHandle, url: string): void {
    if (handle.state !== "starting") return;
    handle.state = "ready";
    const pid = handle.worker.process.pid;
    if (this.#phase === "running") {
      this.#log.info({ workerPid: pid }, `worker ${pid} ready (replacement)`);
      return;
    }
    const ready = [...this.#handles.values()].filter((item) => item.state === "ready").length;
    if (this.#phase === "starting" && ready === this.#setup.workers) {
      this.#phase = "running";
      this.#log.info({ url, workers: ready, dev: this.#setup.dev, root: this.#setup.root }, `listening on ${url}`);
      if (this.#setup.dev) this.#log.info({ devConsole: url + DEV_CONSOLE_PATH }, `dev console at ${url}${DEV_CONSOLE_PATH}`);
    }
  }

  #onExit(handle: WorkerHandle, code: number | null, signal: string | null): void {
    const pid = handle.worker.process.pid;
    this.#handles.delete(handle.worker.id);
    handle.channel.close(`worker ${pid} exited`);
    if (this.#phase === "stopping") {
      if (this.#handles.size === 0) this.#finish();
      return;
    }
    const how = signal ? `signal ${signal}` : `code ${code}`;
    this.#log.error({ workerPid: pid, code, signal }, `worker ${pid} exited unexpectedly with ${how}`);
    const decision = this.#restarts.recordCrash(Date.now());
    if (!decision.restart) {
      this.#fatal(`workers crashed ${decision.crashes} times within ${decision.windowMs / 1000} s; stopping (the last one, pid ${pid}, exited with ${how})`);
      return;
    }
    this.#log.warn({ workerPid: pid, delayMs: decision.delayMs }, `starting a replacement worker in ${decision.delayMs} ms`);
    const timer = setTimeout(() => {
      this.#timers.delete(timer);
      if (this.#phase !== "stopping") this.#fork();
    }, decision.delayMs);
    this.#timers.add(timer);
  }

  /** One clear line on stderr, then the same orderly stop as a signal, with exit code 1. */
  #fatal(message: string): void {
    if (this.#phase === "stopping") return;
    process.stderr.write(`counterpart: ${message}\n`);
    this.#stop("SIGTERM", 1);
  }

  #stop(signal: NodeJS.Signals, exitCode: number): void {
    if (this.#phase === "stopping") return;
    this.#phase = "stopping";
    this.#exitCode = exitCode;
    for (const timer of this.#timers) clearTimeout(timer);
    this.#timers.clear();
    const limitMs = this.#setup.config.shutdownTimeoutMs;
    if (exitCode === 0) this.#log.info({ signal, limitMs }, "shutting down: stopping workers, waiting for in-flight calls");
    for (const handle of this.#handles.values()) {
      handle.state = "stopping";
      handle.worker.process.kill(signal);
    }
    if (this.#handles.size === 0) {
      this.#finish();
      return;
    }
    setTimeout(() => {
      const left = [...this.#handles.values()].map((handle) => handle.worker.process.pid);
      this.#log.warn({ workerPids: left }, "workers did not stop in time; killing them");
      for (const handle of this.#handles.values()) handle.worker.process.kill("SIGKILL");
      this.#finish();
    }, limitMs + STOP_GRACE_MS);
  }

  #finish(): void {
    if (this.#exitCode === 0) this.#log.info("stopped");
    this.#log.flush?.();
    process.exit(this.#exitCode);
  }
}
