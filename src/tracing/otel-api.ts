/**
 * `@opentelemetry/api`, loaded once an SDK has registered a tracer provider. A server
 * without an SDK never needs it, and loading it at start (44 modules) was part of what the
 * started demo held above a bare Fastify server (docs/reference/benchmarks.md "Memory").
 * Every copy of the API 1.x registers its globals under one well-known symbol, so whether
 * anyone registered a provider is told without loading ours. Loaded with `require`: the
 * package's Node entry is CommonJS, the same instance an `import` would give.
 */
import { createRequire } from "node:module";

export type OtelApi = typeof import("@opentelemetry/api");

const GLOBAL_KEY = Symbol.for("opentelemetry.js.api.1");

let loaded: OtelApi | null = null;

/** The API once any copy of it holds a registered tracer provider; until then null, and nothing loaded. */
export function otelApiIfRegistered(): OtelApi | null {
  if (loaded !== null) return loaded;
  const globals = (globalThis as Record<symbol, { trace?: unknown } | undefined>)[GLOBAL_KEY];
  if (globals?.trace === undefined) return null;
  loaded = createRequire(import.meta.url)("@opentelemetry/api") as OtelApi;
  return loaded;
}
