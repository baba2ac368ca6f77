/**
 * What plugin code is shown of the server it runs in, as `core` (verifiers get it): a frozen
 * object of plain values, never the server's own state (its session signer, registries or
 * logger). Made once at start.
 */
export interface CoreFacade {
  readonly server: {
    /** True when the server runs with `--dev`. */
    readonly devMode: boolean;
  };
}

export function createCoreFacade(options: { dev: boolean }): CoreFacade {
  return Object.freeze({ server: Object.freeze({ devMode: options.dev }) });
}
