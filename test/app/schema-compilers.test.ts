// Fastify's schema compilers load only when a route declares a schema (src/app/http-app.ts):
// a route that does still validates its body and serializes its answer as Fastify would.
import { describe, expect, it } from "vitest";
import pino from "pino";
import { createHttpApp } from "../../dist/app/http-app.js";
import { parseConfig } from "../../dist/config/load.js";

describe("Fastify schema compilers, loaded on demand", () => {
  it("validate a body and serialize an answer for a route with a schema", async () => {
    const { app } = createHttpApp(pino({ level: "silent" }), parseConfig({}, {}));
    app.post(
      "/typed",
      {
        schema: {
          body: { type: "object", properties: { n: { type: "integer" } }, required: ["n"] },
          response: { 200: { type: "object", properties: { doubled: { type: "integer" } } } },
        },
      },
      async (request) => ({ doubled: (request.body as { n: number }).n * 2, dropped: "not in the schema" }),
    );
    const ok = await app.inject({ method: "POST", url: "/typed", payload: { n: 21 } });
    expect(ok.statusCode).toBe(200);
    expect(ok.json()).toEqual({ doubled: 42 });
    const bad = await app.inject({ method: "POST", url: "/typed", payload: { n: "x" } });
    expect(bad.statusCode).toBe(400);
    await app.close();
  });
});
