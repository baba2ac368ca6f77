/**
 * The log lines of a server or a made-up `ctx`, kept in memory as parsed objects. pino
 * writes each line with one synchronous `write`, so a call's event is here by the time
 * its answer is: a test reads it right after the call without waiting or flushing.
 */

/** One log line as pino wrote it; RPC and proxy events carry the fields of docs/reference/log-events.md. */
export interface LogLine {
  level: number;
  time: number;
  msg?: string;
  /** `rpc.complete`, `rpc.rejected`, `rpc.error`, `rpc.timeout`, `rpc.circuit_open`, `proxy.*`, … */
  event?: string;
  reqId?: string;
  kind?: string;
  id?: string;
  method?: string;
  status?: number;
  code?: string;
  durationMs?: number;
  [field: string]: unknown;
}

export interface LogFilter {
  /** Lines whose `event` is this name, or matches this pattern (`/^rpc\./`). */
  event?: string | RegExp;
  /** Lines of one request: an answer's `reqId`. */
  reqId?: string;
}

export class LogCapture {
  readonly #lines: LogLine[] = [];

  /** pino's destination: one whole line per call. */
  write(chunk: string): void {
    for (const line of chunk.split("\n")) {
      if (line.trim() === "") continue;
      try {
        this.#lines.push(JSON.parse(line) as LogLine);
      } catch {
        // A line that is not JSON (a stray write to the stream) is kept rather than lost.
        this.#lines.push({ level: 0, time: Date.now(), msg: line });
      }
    }
  }

  lines(filter: LogFilter = {}): LogLine[] {
    const { event, reqId } = filter;
    return this.#lines.filter(
      (line) =>
        (reqId === undefined || line.reqId === reqId) &&
        (event === undefined || (typeof line.event === "string" && (typeof event === "string" ? line.event === event : line.event.search(event) !== -1))),
    );
  }
}
