// Runtime benchmark methods (their own app root, so the other benchmarks run without an
// isolation pool): the same echo inline and isolated, and a limited slow method.
export const policy = {
  isolatedEcho: { runtime: { isolation: "worker" } },
  limited: { runtime: { maxConcurrency: 4, queueLimit: 100 } },
};

export function inlineEcho(_ctx, input) {
  return input;
}

export function isolatedEcho(_ctx, input) {
  return input;
}

export async function limited(_ctx, input) {
  await new Promise((resolve) => setTimeout(resolve, 20));
  return input;
}
