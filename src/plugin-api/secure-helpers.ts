/**
 * The secure-config readers of APP_SERVER (docs/guides/server-methods.md "Secure config"). They read only what
 * the call's `ctx.secure` holds, the calling item's own merged block, so asking for
 * another item's block gives `{}`. Own properties only; results are the frozen blocks.
 */
import { readPath, type SecureBlock } from "../config/secure-config.js";

const EMPTY: SecureBlock = Object.freeze({});

interface SecureCtx {
  kind?: unknown;
  itemId?: unknown;
  contextId?: unknown;
  secure?: unknown;
}

function secureOf(ctx: unknown): Record<string, unknown> | undefined {
  const secure = (ctx as SecureCtx | null | undefined)?.secure;
  return secure !== null && typeof secure === "object" ? (secure as Record<string, unknown>) : undefined;
}

function blockOf(ctx: unknown, group: "plugins" | "modules", id: unknown): SecureBlock {
  const itemId = id ?? (ctx as SecureCtx | null | undefined)?.itemId;
  if (typeof itemId !== "string") return EMPTY;
  const block = readPath(secureOf(ctx), [group, itemId]);
  return block !== null && typeof block === "object" && !Array.isArray(block) ? (block as SecureBlock) : EMPTY;
}

export function getSecurePluginConfig(ctx: unknown, id?: string): SecureBlock {
  return blockOf(ctx, "plugins", id);
}

export function getSecureModuleConfig(ctx: unknown, id?: string): SecureBlock {
  return blockOf(ctx, "modules", id);
}

/** By `ctx.kind`: the plugin's or module's block; `{}` for anything else. */
export function getSecureItemConfig(ctx: unknown, id?: string): SecureBlock {
  const kind = (ctx as SecureCtx | null | undefined)?.kind;
  if (kind === "plugin") return getSecurePluginConfig(ctx, id);
  if (kind === "module") return getSecureModuleConfig(ctx, id);
  return EMPTY;
}

/** The value at `path` (dotted, or an array of keys) in `ctx.secure`, else `fallback`; `null` is a value. */
export function getSecureValue(ctx: unknown, path: string | readonly string[], fallback?: unknown): unknown {
  const value = readPath(secureOf(ctx), path);
  return value === undefined ? fallback : value;
}

/** Like getSecureValue, but `undefined`, `null` and `""` throw (`0` and `false` are values). */
export function requireSecureValue(ctx: unknown, path: string | readonly string[]): unknown {
  const value = readPath(secureOf(ctx), path);
  if (value === undefined || value === null || value === "") {
    throw new Error(`Missing secure configuration: ${typeof path === "string" ? path : path.join(".")}`);
  }
  return value;
}

/** The verifier context `contextId` names (default: the call's), else `default`, else null. */
export function getRpcAuthConfig(ctx: unknown, contextId?: string): unknown {
  const contexts = readPath(secureOf(ctx), ["rpcVerifiers"]);
  const wanted = contextId ?? (ctx as SecureCtx | null | undefined)?.contextId;
  if (typeof wanted === "string") {
    const entry = readPath(contexts, [wanted]);
    if (entry !== undefined) return entry;
  }
  return readPath(contexts, ["default"]) ?? null;
}
