/**
 * The process logger: JSON lines on stdout (pretty in dev mode), with the headers that
 * carry credentials redacted by path and any configured secret value masked wherever it
 * would appear. In dev mode a copy of every line goes to the ring buffer behind getLogs.
 */
import { pino, type DestinationStream, type Logger } from "pino";
import pretty from "pino-pretty";
import { LogRingBuffer } from "./ring-buffer.js";

export type { Logger };

export interface LoggerOptions {
  dev: boolean;
  /** Where lines go; defaults to stdout. Tests pass their own stream to read events. */
  destination?: DestinationStream | NodeJS.WritableStream;
  level?: string;
  devLogMaxEntries?: number;
  secrets?: readonly string[];
}

export interface AppLogger {
  logger: Logger;
  ringBuffer: LogRingBuffer | null;
}

const REDACTED_HEADERS = ["authorization", "cookie", "x-app-csrf", "proxy-authorization", "set-cookie"];

export function createLogger(options: LoggerOptions): AppLogger {
  const ringBuffer = options.dev ? new LogRingBuffer(options.devLogMaxEntries ?? 10_000) : null;
  const secrets = (options.secrets ?? []).filter((secret) => secret.length > 0);
  const redactPaths = REDACTED_HEADERS.flatMap((name) => [
    `req.headers["${name}"]`,
    `headers["${name}"]`,
    `request.headers["${name}"]`,
  ]);

  const base = options.destination ?? (options.dev ? pretty({ sync: true, colorize: process.stdout.isTTY }) : pino.destination({ dest: 1, sync: false }));
  const destination: DestinationStream = ringBuffer
    ? pino.multistream([{ stream: base as DestinationStream, level: "trace" }, { stream: ringBuffer, level: "trace" }])
    : (base as DestinationStream);

  const logger = pino(
    {
      level: options.level ?? (options.dev ? "debug" : "info"),
      base: { pid: process.pid },
      redact: { paths: redactPaths, censor: "[Redacted]" },
      hooks:
        secrets.length > 0
          ? {
              // Secrets can reach a message through an error text or a custom field; mask
              // the value itself, wherever it stands in the serialised line.
              streamWrite: (line: string) => {
                let out = line;
                for (const secret of secrets) if (out.includes(secret)) out = out.split(secret).join("[Redacted]");
                return out;
              },
            }
          : {},
    },
    destination,
  );
  return { logger, ringBuffer };
}
