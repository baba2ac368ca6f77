/**
 * Named verifiers (built-in `jwt` plus those plugins register from their boot hooks).
 * A `Map`, so a verifier name from the config can never resolve to an inherited property.
 * A name belongs to whoever registered it first: a second registration is refused, naming
 * both, so that one plugin cannot silently take over another's verifier. Only the
 * built-ins may be replaced (docs/guides/server-methods.md "Exposing a method: authentication").
 */
export class VerifierRegistry<Fn extends (...args: never[]) => unknown> {
  readonly #verifiers = new Map<string, Fn>();
  readonly #owners = new Map<string, string>();
  readonly #label: string;

  constructor(label: string) {
    this.#label = label;
  }

  /** `owner` names who registers it (`plugin x`, `module y`); `BUILT_IN` may be replaced. */
  register(name: string, fn: Fn, owner: string = BUILT_IN): void {
    if (typeof name !== "string" || name === "") throw new TypeError(`${this.#label} verifier name must be a non-empty string`);
    if (typeof fn !== "function") throw new TypeError(`${this.#label} verifier "${name}" must be a function`);
    const taken = this.#owners.get(name);
    if (taken !== undefined && taken !== BUILT_IN) {
      throw new Error(`${this.#label} verifier "${name}" is already registered by ${taken}; ${owner} cannot register it too`);
    }
    this.#verifiers.set(name, fn);
    this.#owners.set(name, owner);
  }

  /** Drops what an owner registered (a plugin that failed to load must not keep checking calls). */
  removeOwner(owner: string): void {
    for (const [name, registeredBy] of this.#owners) {
      if (registeredBy !== owner) continue;
      this.#owners.delete(name);
      this.#verifiers.delete(name);
    }
  }

  get(name: string): Fn | undefined {
    return this.#verifiers.get(name);
  }

  has(name: string): boolean {
    return this.#verifiers.has(name);
  }

  names(): string[] {
    return [...this.#verifiers.keys()];
  }
}

export const BUILT_IN = "built-in";
