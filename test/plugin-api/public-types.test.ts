/**
 * The types a method author imports say what the server accepts: `MethodPolicy` has every
 * field the policy schema checks (and no other), and the generic contexts type `config`
 * and `emit`. Checked by `tsc` (npm test type-checks the tests); the assertions below are
 * the compile-time ones vitest's expectTypeOf offers.
 */
import { describe, expectTypeOf, it } from "vitest";
import type { z } from "zod/mini";
import type { methodPolicySchema } from "../../src/config/schema.js";
import type { BootApi, MethodPolicy, RouteContext, RpcContext, RpcVerifierInput, StartupErrorCode } from "../../src/index.js";
import { STARTUP_ERROR_CODES, StartupError } from "../../src/index.js";

type Keys<T> = T extends object ? keyof T : never;
type RuntimeOf<T> = T extends { runtime?: infer R } ? NonNullable<R> : never;
type AuthOf<T> = T extends { auth?: infer A } ? Exclude<NonNullable<A>, false> : never;
type SchemaPolicy = z.input<typeof methodPolicySchema>;

describe("public types", () => {
  it("MethodPolicy names every field of the policy schema, at each level", () => {
    expectTypeOf<Keys<MethodPolicy>>().toEqualTypeOf<Keys<SchemaPolicy>>();
    expectTypeOf<Keys<RuntimeOf<MethodPolicy>>>().toEqualTypeOf<Keys<RuntimeOf<SchemaPolicy>>>();
    expectTypeOf<Keys<AuthOf<MethodPolicy>>>().toEqualTypeOf<Keys<AuthOf<SchemaPolicy>>>();
    expectTypeOf<Keys<NonNullable<MethodPolicy["circuitBreaker"]>>>().toEqualTypeOf<Keys<NonNullable<SchemaPolicy["circuitBreaker"]>>>();
  });

  it("RpcContext<Config, Event> types ctx.config and ctx.emit", () => {
    expectTypeOf<RpcContext<{ token: string }>["config"]>().toEqualTypeOf<{ token: string }>();
    expectTypeOf<RpcContext<unknown, { text: string }>["emit"]>().parameter(0).toEqualTypeOf<{ text: string }>();
    expectTypeOf<RpcContext["config"]>().toBeUnknown();
  });

  it("BootApi hands verifiers and routes their real arguments", () => {
    type RpcVerifierArg = Parameters<Parameters<BootApi["registerRpcAuthVerifier"]>[1]>[0];
    expectTypeOf<RpcVerifierArg>().toEqualTypeOf<RpcVerifierInput>();
    type RouteArgs = Parameters<Parameters<BootApi["registerServerRoute"]>[1]>;
    expectTypeOf<RouteArgs>().toEqualTypeOf<[RouteContext, URL, string]>();
    expectTypeOf<BootApi<{ url: string }>["config"]>().toEqualTypeOf<{ url: string }>();
  });

  it("StartupError carries one of the declared codes", () => {
    expectTypeOf<StartupError["code"]>().toEqualTypeOf<StartupErrorCode>();
    expectTypeOf<StartupErrorCode>().toEqualTypeOf<keyof typeof STARTUP_ERROR_CODES>();
  });
});
