/**
 * The registry that typed calls read (docs/guides/toolkit.md "Typed calls: counterpart types"). The file
 * `counterpart types` writes augments `ServerMethods` with the app's plugins and modules:
 *
 *   declare module "@counterpart-viewer/server/client" {
 *     interface ServerMethods { readonly plugin: {...}; readonly module: {...} }
 *   }
 *
 * Left empty, every target is the untyped `RpcTarget` and any id goes, exactly as without
 * the generator: the types below fall back to that, so nothing changes for an app that
 * never runs it.
 */
import type { RpcKind } from "./rpc.js";
import type { RpcTarget } from "./rpc-proxy.js";

// Empty on purpose: the generated file fills it in (interfaces merge; type aliases cannot).
export interface ServerMethods {}

/** The targets of one kind by id: the generated ones, else any id to an untyped target. */
export type ServerTargets<K extends RpcKind> = ServerMethods extends { readonly [P in K]: infer Targets } ? Targets : Record<string, RpcTarget>;

/**
 * The ids an `AppElement` of kind `K` may name: the generated ones, else any string. A
 * kind that is not known yet (`RpcKind`) takes any id, the escape hatch for ids chosen at
 * run time.
 */
export type ServerItemId<K extends RpcKind> = RpcKind extends K ? string : keyof ServerTargets<K> & string;

/**
 * The id an `AppElement` constructor accepts for `I`: a literal must be an id the app has,
 * while a plain `string` (an id chosen at run time) passes and makes an untyped element.
 * Both branches name `I`, so the constructor still infers `I` from the id it is given.
 */
export type ServerItemIdOf<K extends RpcKind, I extends string> = string extends I ? I : I extends ServerItemId<K> ? I : ServerItemId<K>;

/** The target of one item: its generated type when `K` and `I` name one, else `RpcTarget`. */
export type ServerTarget<K extends RpcKind, I extends string> = RpcKind extends K
  ? RpcTarget
  : string extends I
    ? RpcTarget
    : I extends keyof ServerTargets<K>
      ? ServerTargets<K>[I]
      : RpcTarget;
