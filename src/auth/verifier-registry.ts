/**
 * Named verifiers (built-in `jwt` plus those plugins register from their boot hooks).
 * A `Map`, so a verifier name from the config can never resolve to an inherited property.
 */
export class VerifierRegistry<Fn extends (...args: never[]) => unknown> {
  readonly #verifiers = new Map<string, Fn>();
  readonly #label: string;

  constructor(label: string) {
    this.#label = label;
  }

  register(name: string, fn: Fn): void {
    if (typeof name !== "string" || name === "") throw new TypeError(`${this.#label} verifier name must be a non-empty string`);
    if (typeof fn !== "function") throw new TypeError(`${this.#label} verifier "${name}" must be a function`);
    this.#verifiers.set(name, fn);
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
