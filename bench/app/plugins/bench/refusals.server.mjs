// Methods for the refusals benchmark (bench/refusals.mjs), next to the echo so that every
// answer is measured on the same server.
export const policy = {
  // Two running, eight waiting: under 50 connections nearly every call is a 429.
  crowded: { runtime: { maxConcurrency: 2, queueLimit: 8 } },
  // Opens at its first failure and stays open for the whole run: every later call is a 503.
  broken: { runtime: { circuitBreaker: { key: "bench-broken", failureThreshold: 1, resetAfterMs: 86_400_000 } } },
};

export async function crowded(_ctx, input) {
  await new Promise((resolve) => setTimeout(resolve, 50));
  return input;
}

export function broken() {
  throw new Error("the upstream of this bench method is always down");
}
