/**
 * The deadline a call runs under. Own timer (not `AbortSignal.timeout`) so that a finished
 * call clears it instead of leaving it pending.
 */
export class CallTimeoutError extends Error {
  constructor(timeoutMs: number) {
    super(`call exceeded its ${timeoutMs} ms timeout`);
    this.name = "TimeoutError";
  }
}

export interface CallDeadline {
  /** `ctx.signal`: fires on the timeout, or when the client goes away, whichever is first. */
  signal: AbortSignal;
  /**
   * Runs `callback` when the timeout passes, even if the signal already fired because the
   * client left: an isolated worker that ignores its signal is still ended on time.
   */
  onTimeout(callback: (reason: CallTimeoutError) => void): void;
  /** Clears the timer; call it once the method's work has really ended. */
  dispose(): void;
}

/**
 * Arms the call's timeout on `call`, the one AbortController of the call (created by the
 * gateway, which aborts it when the client goes away). One controller per call, not one
 * per concern: creating abort signals is a measurable part of a small call's cost.
 */
export function startDeadline(timeoutMs: number, call: AbortController): CallDeadline {
  const callbacks: Array<(reason: CallTimeoutError) => void> = [];
  const timer = setTimeout(() => {
    const reason = new CallTimeoutError(timeoutMs);
    if (!call.signal.aborted) call.abort(reason);
    for (const callback of callbacks) callback(reason);
  }, timeoutMs);
  return {
    signal: call.signal,
    onTimeout(callback) {
      callbacks.push(callback);
    },
    dispose() {
      clearTimeout(timer);
    },
  };
}

/** Settles with `work`, or rejects with the signal's reason as soon as it fires. */
export function untilAborted<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) {
    // Nobody awaits `work` any more: its own rejection must not go unhandled.
    work.catch(() => {});
    return Promise.reject(signal.reason);
  }
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener("abort", onAbort, { once: true });
    work.then(
      (value) => {
        signal.removeEventListener("abort", onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener("abort", onAbort);
        reject(error);
      },
    );
  });
}
