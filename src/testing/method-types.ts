/**
 * What a test can learn of a server method from its TypeScript signature alone,
 * `fn(ctx, input)`: the config and event types its `ctx` declares (`RpcContext<Config,
 * Event>`), its input and its result. A method written without types gives `unknown`.
 */

/** Any function a server file exports as a method. */
export type ServerMethod = (ctx: any, ...args: any[]) => unknown;

type ContextOf<F> = F extends (ctx: infer C, ...args: any[]) => unknown ? C : unknown;

/** `Config` of the method's `ctx: RpcContext<Config>`. */
export type ConfigOf<F> = ContextOf<F> extends { config: infer C } ? C : unknown;

/** `Event` of the method's `ctx: RpcContext<Config, Event>`: what it may `emit`. */
export type EventOf<F> = ContextOf<F> extends { emit(value: infer E): unknown } ? E : unknown;

/** The arguments after `ctx`, as the browser passes them. */
export type ArgsOf<F> = F extends (ctx: any, ...args: infer A) => unknown ? A : never;

/** The method's first argument after `ctx`; `undefined` for a method that takes none. */
export type InputOf<F> = ArgsOf<F> extends [] ? undefined : ArgsOf<F>[0];

/** The input as a caller passes it: left out only when the method's own signature lets it. */
export type InputArgs<F> = [] extends ArgsOf<F> ? [input?: InputOf<F>] : [input: InputOf<F>];

/** What the method's promise (or plain return) gives. */
export type ResultOf<F> = F extends (...args: any[]) => infer R ? Awaited<R> : never;

/** The method exports of a server file's module type (`typeof Notes`, after `import type * as Notes from …`). */
export type MethodNames<M> = { [K in keyof M]: M[K] extends ServerMethod ? K : never }[keyof M] & string;
