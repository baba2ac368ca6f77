/**
 * AppElement: a UI part that knows its plugin or module and calls its server methods
 * (docs/guides/browser.md "`AppElement`"). A plain class, not an HTMLElement, so
 * it works in any framework; in a custom element, hold one as a field:
 *
 *   class WeatherCard extends HTMLElement {
 *     #app = new AppElement({ kind: "plugin", id: "weather" });
 *     async connectedCallback() {
 *       this.textContent = String(await this.#app.server().forecast({ city: "Oslo" }));
 *     }
 *   }
 *
 * or subclass it (`class Weather extends AppElement { constructor() { super({ kind:
 * "plugin", id: "weather" }); } }`) for code that is not itself a DOM element.
 *
 * With the file `counterpart types` writes, `new AppElement({ kind: "plugin", id: "weather" })`
 * infers its kind and id, so `server()` is typed with that plugin's methods and an unknown
 * id does not compile; a subclass names them (`extends AppElement<"plugin", "weather">`).
 * A typed element is still an `AppElement`, untyped when seen as one; so is an element of
 * an id only known at run time (`id: string`).
 */
import type { RpcTransport } from "./app-context.js";
import { chosenTransport, rpcPath, type RpcKind } from "./rpc.js";
import { rpcTarget } from "./rpc-proxy.js";
import type { ServerItemIdOf, ServerTarget } from "./server-methods.js";

export interface AppElementTarget<K extends RpcKind = RpcKind, I extends string = string> {
  kind: K;
  id: I;
}

export interface ServerOptions {
  /** Default `contextId` of these calls; a call's own `contextId` wins. */
  contextId?: string;
  viewerId?: string;
  /** The HttpClient for these calls, with its auth; defaults to the application one. */
  client?: RpcTransport;
  /** Alias of `client`; `client` wins when both are set. */
  httpClient?: RpcTransport;
}

export class AppElement<K extends RpcKind = RpcKind, I extends string = string> {
  readonly kind: K;
  readonly id: I;

  constructor(target: AppElementTarget<K, ServerItemIdOf<K, I>>) {
    if (target === null || typeof target !== "object") {
      throw new TypeError('AppElement: pass { kind: "plugin" | "module", id } to the constructor (and to super() in a subclass)');
    }
    const { kind, id } = target;
    if (kind !== "plugin" && kind !== "module") throw new TypeError(`AppElement: kind must be "plugin" or "module", not ${String(kind)}`);
    if (typeof id !== "string" || id === "") throw new TypeError("AppElement: id must be a non-empty string");
    this.kind = kind;
    // A literal id outside the app's ids did not compile, so what arrives here is `I`.
    this.id = id as I;
  }

  /**
   * The methods of this element's plugin or module: `this.server(options).name(input,
   * callOptions)`, and `this.server(options).$stream.name(input, callOptions)` for a
   * streaming one. Auth headers are entirely the chosen client's; `options` only pick the
   * client and the defaults of `contextId` and `viewerId`.
   *
   * Typed through `this` (its `kind` and `id`) rather than the class's parameters: a
   * typed target is no `RpcTarget` (its inputs are narrower), so a return type that named
   * `K` and `I` would make a typed element unassignable to the bare `AppElement`.
   */
  server<SK extends RpcKind, SI extends string>(this: AppElementTarget<SK, SI>, options: ServerOptions = {}): ServerTarget<SK, SI> {
    const { kind, id } = this;
    const defaults = { contextId: options.contextId, viewerId: options.viewerId, client: chosenTransport(options) };
    // The Proxy answers any name; which names exist is the generated file's to say.
    return rpcTarget((method) => rpcPath(kind, id, method), () => defaults) as ServerTarget<SK, SI>;
  }
}
