// The benchmark's methods: the cheapest possible work, so that what is measured is the gateway.
export function echo(_ctx, input) {
  return input;
}
