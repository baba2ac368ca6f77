/**
 * The process logger: JSON lines on stdout (pretty in dev mode), with the headers that
 * carry credentials redacted by path and any configured secret value masked wherever it
 * would appear. In dev mode a copy of every line goes to the ring buffer behind getLogs.
 */
import { pino, type DestinationStream, type Logger } from "pino";
import { createRequire } from "node:module";
import type PinoPretty from "pino-pretty";
import { createSecretMasker } from "./mask-secrets.js";
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
  return { logger, ringBuffer };
}

/** How long a line may wait in the batch before it is written. */
const FLUSH_AFTER_MS = 100;

/**
 * Stdout, written asynchronously in batches of about 16 KB (just under sonic-boom's
 * largest single write), as pino advises for async destinations: under load a write per
 * line cost a system call and a thread-pool round trip each, a measurable part of a small
 * call. The first line of a batch arms a timer, so on a quiet server no line waits longer
 * than FLUSH_AFTER_MS; pino flushes what is left at exit. (sonic-boom's own
 * `periodicFlush` would also write an empty buffer every interval on an idle server.)
 */
class BatchedStdout implements DestinationStream {
  readonly #stream = pino.destination({ dest: 1, sync: false, minLength: 16_000 });
  #timer: NodeJS.Timeout | undefined = undefined;
  readonly #flushNow = () => {
    this.#timer = undefined;
    this.#stream.flush();
  };

  write(line: string): void {
    this.#stream.write(line);
    this.#timer ??= setTimeout(this.#flushNow, FLUSH_AFTER_MS).unref();
  }

  /** `logger.flush(cb)`: written out once the callback runs. */
  flush(callback?: (error?: Error) => void): void {
    this.#stream.flush(callback);
  }

  flushSync(): void {
    this.#stream.flushSync();
  }
}

/** pino-pretty costs ~9 MB of memory: loaded (synchronously, it is CommonJS) in dev mode only. */
function prettyStream(): DestinationStream {
  const pretty = createRequire(import.meta.url)("pino-pretty") as typeof PinoPretty;
  return pretty({ sync: true, colorize: process.stdout.isTTY });
}
