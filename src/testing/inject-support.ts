/**
 * Fastify's `inject` runs light-my-request, which `require()`s cookie@2, an ES module.
 * Node loads an ES module through `require()` from 20.19 and 22.12 on (earlier only with
 * `--experimental-require-module`); before that the first `inject` would throw
 * ERR_REQUIRE_ESM from deep inside Fastify. Loading it here, when a test app starts,
 * turns that into one clear error. The server itself never loads it: Fastify requires it
 * on the first `inject` call, and only this entry makes one.
 */
import { createRequire } from "node:module";

const fastifyRequire = createRequire(createRequire(import.meta.url).resolve("fastify"));

export function requireInject(): void {
  try {
    fastifyRequire("light-my-request");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ERR_REQUIRE_ESM") throw error;
    throw new Error(
      `startTestApp needs Node 20.19 or later, or 22.12 or later (this is ${process.version}): Fastify's inject loads an ES module with require(), ` +
        "which this Node refuses without --experimental-require-module",
      { cause: error },
    );
  }
}
