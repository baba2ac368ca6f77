/**
 * The process logger: JSON lines on stdout (pretty in dev mode), with the headers that
 * carry credentials redacted by path and any configured secret value masked wherever it
 * would appear. In dev mode a copy of every line goes to the ring buffer behind getLogs.
 */
import { pino, type DestinationStream, type Logger } from "pino";
import { createRequire } from "node:module";
import type PinoPretty from "pino-pretty";
import { createSecretMasker, type SecretMask } from "./mask-secrets.js";
import { LogRingBuffer } from "./ring-buffer.js";

export type { Logger };

export interface LoggerOptions {
  dev: boolean;
  /** Where lines go; defaults to stdout. Tests pass their own stream to read events. */
  destination?: DestinationStream | NodeJS.WritableStream;
  level?: string;
  devLogMaxEntries?: number;
  secrets?: readonly string[];
  /** Dev mode in a cluster worker: lines go here (to the master's buffer) instead of a local ring buffer. */
  devLogSink?: { write(line: string): void } | undefined;
}

export interface AppLogger {
  logger: Logger;
  ringBuffer: LogRingBuffer | null;
  /** The masker the log lines go through, for answers that may echo a secret; null with no secret to mask. */
  maskSecrets: SecretMask | null;
}

const REDACTED_HEADERS = ["authorization", "cookie", "x-app-csrf", "proxy-authorization", "set-cookie"];

export function createLogger(options: LoggerOptions): AppLogger {
  const ringBuffer = options.dev && !options.devLogSink ? new LogRingBuffer(options.devLogMaxEntries ?? 10_000) : null;
  const devStream = options.dev ? (options.devLogSink ?? ringBuffer) : null;
  const masker = createSecretMasker(options.secrets ?? []);
  const redactPaths = REDACTED_HEADERS.flatMap((name) => [
    `req.headers["${name}"]`,
    `headers["${name}"]`,
    `request.headers["${name}"]`,
  ]);

  const base = options.destination ?? (options.dev ? prettyStream() : new BatchedStdout());
  const destination: DestinationStream = devStream
    ? pino.multistream([{ stream: base as DestinationStream, level: "trace" }, { stream: devStream, level: "trace" }])
    : (base as DestinationStream);

  const logger = pino(
    {
      level: options.level ?? (options.dev ? "debug" : "info"),
      base: { pid: process.pid },
      redact: { paths: redactPaths, censor: "[Redacted]" },
      hooks: masker ? { streamWrite: masker } : {},
    },
    destination,
  );
  return { logger, ringBuffer, maskSecrets: masker };
}

/** How long a line may wait in the batch before it is written. */
const FLUSH_AFTER_MS = 100;
/** A batch this long (in UTF-16 units) is written at once. */
const BATCH_LENGTH = 16_000;

/**
 * Stdout in batches: lines gather here and go out in one synchronous write per ~16 KB,
 * or FLUSH_AFTER_MS after the first line of a batch, whichever comes first. A write per
 * line cost a system call each, a measurable part of a small call under load. The writes
 * are synchronous (pino's own default for stdout) so that nothing is ever in flight on
 * another thread: what `logger.flush()` or the process's exit writes is really written.
 * Only a SIGKILL loses lines, at most FLUSH_AFTER_MS of them.
 */
class BatchedStdout implements DestinationStream {
  readonly #stream = pino.destination({ dest: 1, sync: true });
  #batch = "";
  #timer: NodeJS.Timeout | undefined = undefined;
  readonly #writeBatch = (): void => {
    if (this.#timer !== undefined) {
      clearTimeout(this.#timer);
      this.#timer = undefined;
    }
    if (this.#batch === "") return;
    const batch = this.#batch;
    this.#batch = "";
    this.#stream.write(batch);
  };

  constructor() {
    process.once("exit", this.#writeBatch);
  }

  write(line: string): void {
    this.#batch += line;
    if (this.#batch.length >= BATCH_LENGTH) this.#writeBatch();
    else this.#timer ??= setTimeout(this.#writeBatch, FLUSH_AFTER_MS).unref();
  }

  /** `logger.flush(cb)`: everything logged so far is written when the callback runs. */
  flush(callback?: (error?: Error) => void): void {
    this.#writeBatch();
    callback?.();
  }

  flushSync(): void {
    this.#writeBatch();
  }
}

/** pino-pretty costs ~9 MB of memory: loaded (synchronously, it is CommonJS) in dev mode only. */
function prettyStream(): DestinationStream {
  const pretty = createRequire(import.meta.url)("pino-pretty") as typeof PinoPretty;
  return pretty({ sync: true, colorize: process.stdout.isTTY });
}
