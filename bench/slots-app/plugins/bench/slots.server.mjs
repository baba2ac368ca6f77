// The slots benchmark's methods (bench/slots.mjs): one echo three times, without a limit,
// with a per-process limit and with a deployment-wide one, each limit far above the load's
// 50 connections so that no call ever waits: what is measured is the cost of taking and
// giving back a slot.
const NEVER_QUEUES = 1_000;

export const policy = {
  limitedHere: { runtime: { maxConcurrency: NEVER_QUEUES } },
  limitedDeploymentWide: { runtime: { maxConcurrency: NEVER_QUEUES, concurrencyScope: "deployment" } },
};

export function echo(_ctx, input) {
  return input;
}

export const limitedHere = echo;
export const limitedDeploymentWide = echo;
