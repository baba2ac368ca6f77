/**
 * The Standard Schema v1 interface (https://standardschema.dev), which zod 3.24+/4,
 * valibot 1 and arktype 2 implement: the server validates through `~standard` and
 * depends on none of them.
 *
 * The types are copied from `@standard-schema/spec` 1.0 rather than imported: the spec
 * invites that ("you can copy the types into your library"), they are frozen for v1, and
 * TypeScript compares them structurally, so every validator that satisfies the package's
 * types satisfies these. The package would be a dependency of every app for ~50 lines of
 * types. Nothing else may import a validator library here.
 */

/** A validator that implements Standard Schema v1. */
export interface StandardSchemaV1<Input = unknown, Output = Input> {
  readonly "~standard": StandardSchemaV1.Props<Input, Output>;
}

// eslint-disable-next-line @typescript-eslint/no-namespace
export declare namespace StandardSchemaV1 {
  export interface Props<Input = unknown, Output = Input> {
    readonly version: 1;
    readonly vendor: string;
    readonly validate: (value: unknown) => Result<Output> | Promise<Result<Output>>;
    readonly types?: Types<Input, Output> | undefined;
  }
  export type Result<Output> = SuccessResult<Output> | FailureResult;
  export interface SuccessResult<Output> {
    readonly value: Output;
    readonly issues?: undefined;
  }
  export interface FailureResult {
    readonly issues: ReadonlyArray<Issue>;
  }
  export interface Issue {
    readonly message: string;
    readonly path?: ReadonlyArray<PropertyKey | PathSegment> | undefined;
  }
  export interface PathSegment {
    readonly key: PropertyKey;
  }
  export interface Types<Input = unknown, Output = Input> {
    readonly input: Input;
    readonly output: Output;
  }
  export type InferInput<Schema extends StandardSchemaV1> = NonNullable<Schema["~standard"]["types"]>["input"];
  export type InferOutput<Schema extends StandardSchemaV1> = NonNullable<Schema["~standard"]["types"]>["output"];
}

/** True for a Standard Schema v1 validator (arktype's are functions, the others objects). */
export function isStandardSchema(value: unknown): value is StandardSchemaV1 {
  if ((typeof value !== "object" && typeof value !== "function") || value === null) return false;
  const props = (value as { "~standard"?: unknown })["~standard"];
  if (typeof props !== "object" || props === null) return false;
  const { version, validate } = props as { version?: unknown; validate?: unknown };
  return version === 1 && typeof validate === "function";
}

/**
 * Runs a validator: its result as is when it answers synchronously (the common case, no
 * promise), else the promise. A validator that throws rejects like one that fails.
 */
export function runSchema(schema: StandardSchemaV1, value: unknown): StandardSchemaV1.Result<unknown> | Promise<StandardSchemaV1.Result<unknown>> {
  return schema["~standard"].validate(value);
}
