/**
 * What a test client's item methods (`viewer.plugin(id).search(input)`) reject with when
 * the server answers an error: the answer's status, its stable `code` and `details`, and
 * the request id that finds the call's log event. The same fields as the browser's
 * `HttpError`, so an assertion reads the same on either side.
 */
export class RpcCallError extends Error {
  readonly status: number;
  /** The answer's `code`; `HTTP_<status>` when its body carries none, as in the browser client. */
  readonly code: string;
  readonly details: Record<string, any>;
  /** The parsed body of the answer, or the stream's last record. */
  readonly body: unknown;
  /** Finds the call's log event: `app.logs({ reqId })`. */
  readonly reqId: string;

  constructor(init: { status: number; message: string; code?: string | undefined; details?: Record<string, any> | undefined; body: unknown; reqId: string }) {
    super(init.message);
    this.name = "RpcCallError";
    this.status = init.status;
    this.code = init.code ?? `HTTP_${init.status}`;
    this.details = init.details ?? {};
    this.body = init.body;
    this.reqId = init.reqId;
  }
}
