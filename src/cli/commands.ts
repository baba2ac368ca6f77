/**
 * The author's commands (docs/guides/toolkit.md): `counterpart <command> [...]`.
 * Anything else on the command line starts the server. A Map, so that a word typed on
 * the command line never reaches an inherited property.
 */
export type Command = (argv: string[], env: NodeJS.ProcessEnv) => Promise<number>;

export const COMMANDS = new Map<string, { summary: string; run: () => Promise<Command> }>([
  ["init", { summary: "[dir]  makes a new app root: a TypeScript plugin, a page, a test", run: async () => (await import("./init-command.js")).initCommand }],
  ["check", { summary: "type-checks the app's server files with its tsconfig.json", run: async () => (await import("./check-command.js")).checkCommand }],
  ["types", { summary: "writes the .d.ts that types the viewer's calls to the server's methods", run: async () => (await import("./types-command.js")).typesCommand }],
]);
