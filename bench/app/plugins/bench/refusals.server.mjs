// Methods for the refusals benchmark (bench/refusals.mjs), next to the echo so that every
// answer is measured on the same server.
export const policy = {
  // Two running, eight waiting: under 50 connections nearly every call is a 429.
  crowded: { runtime: { maxConcurrency: 2, queueLimit: 8 } },
  // One slot and no queue, taken by one call that lasts until its client leaves
  // (bench/refusals.mjs holds it for the whole run): every other call is a 429.
  held: { runtime: { maxConcurrency: 1, queueLimit: 0, timeoutMs: 86_400_000 } },
  // Opens at its first failure and stays open for the whole run: every later call is a 503.
  broken: { runtime: { circuitBreaker: { key: "bench-broken", failureThreshold: 1, resetAfterMs: 86_400_000 } } },
};

export async function crowded(_ctx, input) {
  await new Promise((resolve) => setTimeout(resolve, 50));
  return input;
}

/** Ends when its caller goes away. */
export function held(ctx) {
  return new Promise((resolve) => ctx.signal.addEventListener("abort", () => resolve(null), { once: true }));
}

export function broken() {
  throw new Error("the upstream of this bench method is always down");
}
