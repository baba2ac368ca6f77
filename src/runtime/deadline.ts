/**
 * The signal a call runs under: it fires when the method's `timeoutMs` passes or when the
 * client goes away, whichever comes first. Its own timer (not `AbortSignal.timeout`) so
 * that a finished call clears it instead of leaving thousands of pending timers behind.
 */
export class CallTimeoutError extends Error {
  constructor(timeoutMs: number) {
    super(`call exceeded its ${timeoutMs} ms timeout`);
    this.name = "TimeoutError";
  }
}

export interface CallDeadline {
  signal: AbortSignal;
  dispose(): void;
}

export function startDeadline(timeoutMs: number, clientSignal: AbortSignal): CallDeadline {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(new CallTimeoutError(timeoutMs)), timeoutMs);
  const onClientGone = () => controller.abort(clientSignal.reason);
  if (clientSignal.aborted) onClientGone();
  else clientSignal.addEventListener("abort", onClientGone, { once: true });
  return {
    signal: controller.signal,
    dispose() {
      clearTimeout(timer);
      clientSignal.removeEventListener("abort", onClientGone);
    },
  };
}

/** Settles with `work`, or rejects with the signal's reason as soon as it fires. */
export function untilAborted<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason);
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
