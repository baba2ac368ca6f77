/**
 * docs/guides/toolkit.md "Typed calls: counterpart types", the JSON rules: a result or event is typed as
 * what `JSON.stringify` makes of it on the server, an input as what the browser can send
 * for the method to get what it declares. Each rule is a type equality the viewer's tsc
 * checks, so a rule written wrong fails its line.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { expectErrorsWhereMarked, runTypes, TYPES_FILE, typesAppRoot } from "../helpers/viewer-types.js";

const TYPES = `
export type Json = string | number | boolean | null | Json[] | { [key: string]: Json };
type ErrorLike = { code: string; name: string; message: string; stack?: string; cause?: unknown };
export enum Color { Red = "red", Green = "green" }
export enum Level { Low, High }
export interface Tag { readonly name: string; note?: string }
export interface Page<T> { items: T[]; next: Page<T> | null }
export class Person {
  name = "Ada";
  private age = 36;
  #secret = "x";
  born = new Date(0);
  get upper(): string { return this.name.toUpperCase(); }
  greet(): string { return "hi"; }
}
export class AppError extends Error {
  constructor(public readonly code: string) { super(code); }
}
export class NotFound extends AppError { path = "/"; }
export class Bag extends Map<string, number> { label = "x"; }
export class Base { a = 1; }
export class Derived extends Base { b = "x"; }
export interface ErrorLike extends Error { code: string }
export class Money {
  constructor(readonly cents: number) {}
  toJSON(): { amount: string; currency: "EUR" } { return { amount: String(this.cents / 100), currency: "EUR" }; }
}
`;

const WIRE = `
import type { FileResult, MethodPolicy, RpcContext, UploadedFile } from "@counterpart-viewer/server";
import type { AppError, Bag, Color, Derived, ErrorLike, Json, Level, Money, NotFound, Page, Person, Tag } from "./types.js";

export const policy: Record<string, MethodPolicy> = { ticks: { runtime: { streaming: true } } };

export function dropped(ctx: RpcContext): {
  fn: () => void;
  gone: undefined;
  maybe: string | undefined;
  callback?: (x: number) => number;
  either: number | (() => void);
  sym: symbol;
} { return null!; }
export function arrays(ctx: RpcContext): { holes: Array<string | undefined>; fns: Array<() => void>; dates: Date[]; tuple: [string, number?] } { return null!; }
export function nothing(ctx: RpcContext): Promise<void> { return Promise.resolve(); }
export function optional(ctx: RpcContext): string | undefined { return undefined; }
export function bigints(ctx: RpcContext): { id: bigint | string; n: number } { return null!; }
export function bigint(ctx: RpcContext): bigint { return 1n; }
export function upload(ctx: RpcContext, input: { label: string; file: UploadedFile; more: UploadedFile[] }): { described: UploadedFile } { return null!; }
export function download(ctx: RpcContext): FileResult { return null!; }
export function opaque(ctx: RpcContext): { map: Map<string, number>; set: Set<number>; error: Error; bytes: Uint8Array } { return null!; }
export function extended(ctx: RpcContext, input: AppError): { error: AppError; notFound: NotFound; bag: Bag; derived: Derived; like: ErrorLike } { return null!; }
export function custom(ctx: RpcContext): { price: Money; at: Date } { return null!; }
export function enums(ctx: RpcContext, input: { color: Color; level: Level }): Color { return input.color; }
export function records(ctx: RpcContext): { byKey: Record<string, Date>; fixed: Record<"a" | "b", number>; partial: Partial<Tag> } { return null!; }
export function people(ctx: RpcContext, input: Person): Person { return input; }
export function json(ctx: RpcContext, input: Json): Json { return input; }
export function pages(ctx: RpcContext): Page<Tag> { return null!; }
export function generic<T extends string>(ctx: RpcContext, input: T): { echoed: T } { return { echoed: input }; }
export function dated(ctx: RpcContext, input: { when: Date; label: string }): string { return input.label; }
export function lists(ctx: RpcContext, input: { holes: (string | undefined)[]; pair: [a: string, b?: number]; maybe: [string | undefined]; rest: [string, ...(number | undefined)[]]; gone: undefined[] }): number { return 0; }
export function maybeInput(ctx: RpcContext, input?: { q: string }): number { return 0; }
export function unionInput(ctx: RpcContext, input: string | undefined): number { return 0; }
export function twoArgs(ctx: RpcContext, first: { a: number }, second: string): number { return 0; }
export function restArgs(ctx: RpcContext, ...args: string[]): number { return 0; }
export function overloaded(ctx: RpcContext, input: string): string;
export function overloaded(ctx: RpcContext, input: number): number;
export function overloaded(ctx: RpcContext, input: unknown): unknown { return input; }
export async function ticks(ctx: RpcContext<unknown, { at: Date; n: bigint | number } | undefined>): Promise<void> {}
`;

describe("counterpart types: the JSON rules", () => {
  const root = typesAppRoot({ "plugins/wire/types.ts": TYPES, "plugins/wire/wire.server.ts": WIRE });

  beforeAll(async () => {
    const run = await runTypes(["--root", root]);
    expect(run.stderr).toBe("");
    expect(run.code).toBe(0);
  });

  it("leaves undefined out of an input's array and tuple elements: the browser's JSON.stringify sends it as null", () => {
    const text = readFileSync(join(root, TYPES_FILE), "utf8");
    // Compared as text: a viewer's tsc takes \`[string, number?]\` and \`[string, (number | undefined)?]\` as one type.
    expect(text).toContain("lists: ((input: { holes: string[]; pair: [string, number?]; maybe: [string]; rest: [string, ...number[]]; gone: never[] }, callOptions?: RpcCallOptions) => Promise<number>) & DeclaresErrors<never>;");
  });

  it("types results, events and inputs as they cross JSON", () => {
    const { expected, actual } = expectErrorsWhereMarked(
      root,
      `
type Equal<X, Y> = (<T>() => T extends X ? 1 : 2) extends <T>() => T extends Y ? 1 : 2 ? true : false;
type Wire = typeof xserver.plugin.wire;
type Out<M extends keyof Wire> = Wire[M] extends (...args: never[]) => Promise<infer R> ? R : never;
type In<M extends keyof Wire> = Wire[M] extends (...args: infer A) => unknown ? A : never;

export const rules: true[] = [
  // Functions, symbols and undefined leave an object; a property that may hold one becomes optional.
  true as Equal<Out<"dropped">, { maybe?: string; either?: number }>,
  // In an array they become null; an optional tuple element may arrive as null.
  true as Equal<Out<"arrays">, { holes: (string | null)[]; fns: null[]; dates: string[]; tuple: [string, (number | null)?] }>,
  // A whole answer of undefined is null.
  true as Equal<Out<"nothing">, null>,
  true as Equal<Out<"optional">, string | null>,
  // JSON.stringify throws on a bigint: that answer never arrives.
  true as Equal<Out<"bigints">, { id: string; n: number }>,
  true as Equal<Out<"bigint">, never>,
  // Library classes are not what their declarations say once stringified.
  true as Equal<Out<"opaque">, { map: unknown; set: unknown; error: unknown; bytes: unknown }>,
  // So is a class of the app's that extends one: an Error's message and stack are not enumerable, a Map's size is a getter.
  // One that extends only the app's classes has their fields, and an interface that extends a library's is what it says.
  true as Equal<Out<"extended">, { error: unknown; notFound: unknown; bag: unknown; derived: { a: number; b: string }; like: ErrorLike }>,
  true as Equal<In<"extended">[0]["code"], string>,
  // toJSON() decides: Date is a string, a class of the app's is what its toJSON returns.
  true as Equal<Out<"custom">, { price: { amount: string; currency: "EUR" }; at: string }>,
  // Files: a Blob (a File too) where the method takes an UploadedFile; a Blob where it answers a file;
  // an UploadedFile it answers as JSON is its description.
  true as Equal<In<"upload">[0], { label: string; file: Blob; more: Blob[] }>,
  true as Equal<Out<"upload">, { described: { name: string; type: string; size: number } }>,
  true as Equal<Out<"download">, Blob>,
  // Enums are their values.
  true as Equal<Out<"enums">, "red" | "green">,
  true as Equal<In<"enums">[0], { color: "red" | "green"; level: 0 | 1 }>,
  // Library generics are expanded.
  true as Equal<Out<"records">, { byKey: { [key: string]: string }; fixed: { a: number; b: number }; partial: { readonly name?: string; note?: string } }>,
  // A class instance: its fields (private ones too), not its getters, methods or #private fields.
  true as Equal<Out<"people">, { name: string; age: number; born: string }>,
  // As an input, what JSON cannot carry is unknown, and a method the browser cannot send is left open.
  true as Equal<In<"people">[0], { name: string; age: number; born: unknown; readonly upper: string; greet?: unknown }>,
  // Recursive types are named once.
  true as Equal<Out<"json">, Json>,
  true as Equal<Out<"pages">["next"], Out<"pages"> | null>,
  // A type parameter is its constraint.
  true as Equal<Out<"generic">, { echoed: string }>,
  true as Equal<In<"dated">[0], { when: unknown; label: string }>,
];

type Json = string | number | boolean | null | Json[] | { [key: string]: Json };
type ErrorLike = { code: string; name: string; message: string; stack?: string; cause?: unknown };

export async function inputs(): Promise<void> {
  await xserver.plugin.wire.maybeInput();
  await xserver.plugin.wire.maybeInput({ q: "x" });
  await xserver.plugin.wire.maybeInput({ q: 1 }); // error TS2322
  await xserver.plugin.wire.unionInput();
  await xserver.plugin.wire.unionInput(1); // error TS2345
  // Only the first argument after ctx travels.
  await xserver.plugin.wire.twoArgs({ a: 1 });
  await xserver.plugin.wire.twoArgs({ a: 1 }, "second"); // error TS2559
  await xserver.plugin.wire.restArgs(["anything"]);
  // Several signatures: not typed rather than typed wrong.
  const over: unknown = await xserver.plugin.wire.overloaded(true);
  const n: number = await xserver.plugin.wire.overloaded(1); // error TS2322
  await xserver.plugin.wire.dated({ when: new Date(), label: "x" });
  await xserver.plugin.wire.dated({ when: "2024-01-01", label: 1 }); // error TS2322
  const handle = xserver.plugin.wire.$stream.ticks();
  for await (const event of handle.events) {
    // An emitted undefined arrives as null; Date as text; bigint never does.
    const tick: { at: string; n: number } | null = event;
    const wrong: { at: Date } | null = event; // error TS2322
    void [tick, wrong];
  }
  const done: null = await handle.result;
  void [over, n, done];
}
`,
    );
    expect(actual).toEqual(expected);
  });
});
