// docs/guides/server-methods.md "Server methods": what a `.ts` server file, and each `.ts` file it imports, may
// import: extensionless paths, folders, JSON without `with { type: "json" }`, the
// tsconfig.json `paths` and `baseUrl`, packages installed in the item's folder or the app
// root's, each file one module instance however it is named. `.mjs` files keep Node's rules.
import { describe, expect, it } from "vitest";
import { startServer, useServer } from "../helpers/server.js";
import { rpc } from "../helpers/http.js";
import { tempApp } from "../helpers/app-root.js";

const PUBLIC = "export const policy = { values: { auth: { public: true } }, isolated: { auth: { public: true }, runtime: { isolation: 'worker' } }, counts: { auth: { public: true } } };";

const PLUGIN = "plugins/resolving";
const resolvingFiles: Record<string, string> = {
  // Comments and trailing commas, as editors write them; the paths come from the base.
  [`${PLUGIN}/tsconfig.json`]: `{
    // Settings shared with the base.
    "extends": "./tsconfig.base.json",
    "compilerOptions": { "strict": true, /* kept */ },
  }`,
  [`${PLUGIN}/tsconfig.base.json`]: `{
    "compilerOptions": {
      "baseUrl": "./src", // "paths" targets are relative to it
      "paths": {
        "@lib/*": ["./lib/*"],
        "@lib/special/*": ["./special/*"],
        "@multi/*": ["./missing/*", "./fallback/*"],
        "exact-name": ["./exact"],
      },
    },
  }`,
  [`${PLUGIN}/resolving.server.ts`]: `
    import { basename } from "node:path";
    import { helper } from "./helper";
    import { fromLib, libData } from "./lib";
    import data from "./data.json";
    import { thing } from "@lib/thing";
    import { special } from "@lib/special/one";
    import { fallback } from "@multi/two";
    import { exact } from "exact-name";
    import { viaBaseUrl } from "by-base";
    import { fromItem } from "item-pkg";
    import { fromRoot } from "root-pkg";
    ${PUBLIC}
    export function values(): Record<string, unknown> {
      return { helper, fromLib, answer: (data as { answer: number }).answer, sameJson: libData === data, thing, special, fallback, exact, viaBaseUrl, fromItem, fromRoot, builtin: basename("/a/b") };
    }
    export const isolated = values;
  `,
  [`${PLUGIN}/helper.ts`]: 'import { deep } from "./nested/deep";\nexport const helper: string = `helper+${deep}`;\n',
  [`${PLUGIN}/nested/deep.mts`]: 'export const deep: string = "deep";\n',
  [`${PLUGIN}/lib/index.ts`]: 'import data from "../data.json";\nexport const libData = data;\nexport const fromLib: string = `lib+${data.answer}`;\n',
  [`${PLUGIN}/data.json`]: '{ "answer": 42 }\n',
  [`${PLUGIN}/src/lib/thing.ts`]: 'export const thing: string = "thing";\n',
  [`${PLUGIN}/src/special/one.ts`]: 'export const special: string = "special";\n',
  [`${PLUGIN}/src/fallback/two/index.ts`]: 'export const fallback: string = "fallback";\n',
  [`${PLUGIN}/src/exact.mjs`]: 'export const exact = "exact";\n',
  [`${PLUGIN}/src/by-base.ts`]: 'export const viaBaseUrl: string = "by-base";\n',
  [`${PLUGIN}/node_modules/item-pkg/package.json`]: '{ "name": "item-pkg", "type": "module", "exports": "./index.js" }\n',
  [`${PLUGIN}/node_modules/item-pkg/index.js`]: 'export const fromItem = "item-pkg";\n',
  ["node_modules/root-pkg/package.json"]: '{ "name": "root-pkg", "type": "module", "exports": "./index.js" }\n',
  ["node_modules/root-pkg/index.js"]: 'export const fromRoot = "root-pkg";\n',
};

const instanceFiles: Record<string, string> = {
  "plugins/instances/tsconfig.json": '{ "compilerOptions": { "paths": { "@item/*": ["./*"] } } }',
  "plugins/instances/counter.ts": "let count = 0;\nexport function bump(): number {\n  count += 1;\n  return count;\n}\n",
  "plugins/instances/sub/again.ts": 'export { bump } from "../counter.js";\n',
  "plugins/instances/data.json": '{ "shared": true }\n',
  // A JSON module as Node's own rules import it.
  "plugins/instances/sub/typed.mjs": 'import data from "../data.json" with { type: "json" };\nexport default data;\n',
  "plugins/instances/instances.server.ts": `
    import { bump as bare } from "./counter";
    import { bump as withTs } from "./counter.ts";
    import { bump as throughDotDot } from "./sub/../counter";
    import { bump as throughJs } from "./sub/again";
    import { bump as mapped } from "@item/counter";
    import plain from "./data.json";
    import typed from "./sub/typed.mjs";
    ${PUBLIC}
    export async function counts(): Promise<Record<string, unknown>> {
      const dynamic = ((await import("./counter")) as { bump: () => number }).bump;
      return {
        oneFunction: new Set([bare, withTs, throughDotDot, throughJs, mapped, dynamic]).size === 1,
        counts: [bare(), withTs(), throughDotDot(), throughJs(), mapped(), dynamic()],
        oneJson: plain === typed,
      };
    }
  `,
};

describe(".ts server files: import resolution", () => {
  const app = useServer({ root: tempApp({ files: { ...resolvingFiles, ...instanceFiles } }) });

  const expected = {
    helper: "helper+deep",
    fromLib: "lib+42",
    answer: 42,
    sameJson: true,
    thing: "thing",
    special: "special",
    fallback: "fallback",
    exact: "exact",
    viaBaseUrl: "by-base",
    fromItem: "item-pkg",
    fromRoot: "root-pkg",
    builtin: "b",
  };

  it("resolves extensionless paths, folders, JSON, tsconfig paths and baseUrl, and installed packages", async () => {
    const answer = await rpc(app.url, "plugin/resolving/values", { viewer: app.viewer });
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({ result: expected });
  });

  it("resolves the same way in an isolation worker", async () => {
    const answer = await rpc(app.url, "plugin/resolving/isolated", { viewer: app.viewer });
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({ result: expected });
  });

  it("loads each file once, however it is named: one module instance, one counter", async () => {
    const answer = await rpc(app.url, "plugin/instances/counts", { viewer: app.viewer });
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({ result: { oneFunction: true, counts: [1, 2, 3, 4, 5, 6], oneJson: true } });
  });
});

describe(".ts server files: imports that do not resolve", () => {
  it("an extensionless import that matches no file names the import and the importing file's line", async () => {
    const root = tempApp({ files: { "plugins/p/a.server.ts": 'import { x } from "./missing";\nexport const y = () => x;\n' } });
    await expect(startServer({ root, strict: true })).rejects.toThrow(`plugin p failed to load: ${root}/plugins/p/a.server.ts:1:19: cannot import "./missing": no such file`);
  });

  it("JSON that does not parse: the error names the file", async () => {
    const root = tempApp({
      files: {
        "plugins/p/a.server.ts": 'import data from "./broken.json";\nexport const y = () => data;\n',
        "plugins/p/broken.json": '{ "a": 1, }',
      },
    });
    const error = await startServer({ root, strict: true }).then(() => undefined, (failure: Error) => failure);
    // Parsed, and the parse error says where: not refused for a missing import attribute.
    expect(error?.message).toMatch(new RegExp(`${root}/plugins/p/broken\\.json: .*JSON at position`));
  });

  it("a tsconfig.json that does not parse: the error names it", async () => {
    const root = tempApp({
      files: {
        "plugins/p/tsconfig.json": '{ "compilerOptions": { "paths": } }',
        "plugins/p/a.server.ts": 'import { x } from "@lib/x";\nexport const y = () => x;\n',
      },
    });
    await expect(startServer({ root, strict: true })).rejects.toThrow(`cannot read ${root}/plugins/p/tsconfig.json`);
  });

  it("a .mjs server file keeps Node's rules: no extensionless import", async () => {
    const root = tempApp({
      files: {
        "plugins/p/a.server.mjs": 'import { x } from "./helper";\nexport const y = () => x;\n',
        "plugins/p/helper.ts": "export const x = 1;\n",
      },
    });
    await expect(startServer({ root, strict: true })).rejects.toThrow(/plugins\/p\/a\.server\.mjs:1:19: cannot import "\.\/helper": no such file; .*write the server file as \.ts/);
  });
});
