// docs/guides/deployment.md "Containers": the Dockerfile names real things. It is read here, not
// built (there is no Docker on the CI machine): its stages, what the runtime stage
// installs, the user, the command, the variables and the port, what it copies from the
// build context, and its HEALTHCHECK run as written against a real server.
import { execFile } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { CLUSTER_APP } from "../helpers/cluster.js";
import { closedPort } from "../helpers/http.js";
import { REPO } from "../helpers/process.js";
import { startServer } from "../helpers/server.js";
import { envOf, execForm, readDockerfile, serverVariables, type Stage } from "./deploy-files.js";

const stages = readDockerfile();
const runtime = stages.at(-1)!;
const runtimeEnv = envOf(runtime);
const all = (stage: Stage, keyword: string) => stage.instructions.filter((instruction) => instruction.keyword === keyword);

describe("the Dockerfile", () => {
  it("builds in one stage and runs from another that copies only dist/ from it", () => {
    expect(stages.length).toBeGreaterThanOrEqual(2);
    const build = stages.find((stage) => stage.name === "build");
    expect(build).toBeDefined();
    expect(all(build!, "RUN").some((run) => /\bnpm run build\b/.test(run.args))).toBe(true);
    const fromBuild = all(runtime, "COPY").filter((copy) => copy.args.startsWith("--from="));
    expect(fromBuild.map((copy) => copy.args.split(/\s+/)[0])).toEqual(["--from=build"]);
    expect(fromBuild.map((copy) => copy.args.split(/\s+/)[1])).toEqual(["/build/dist"]);
    // The build stage's WORKDIR is where that dist/ was built.
    expect(all(build!, "WORKDIR").at(-1)?.args).toBe("/build");
  });

  it("installs production dependencies only in the runtime stage", () => {
    const installs = all(runtime, "RUN").filter((run) => /\bnpm\s+(?:ci|install|i)\b/.test(run.args));
    expect(installs.length).toBeGreaterThan(0);
    for (const install of installs) {
      expect(install.args).toMatch(/--omit=dev\b/);
      // Lifecycle scripts would run `prepare`, which builds and needs the dev dependencies.
      expect(install.args).toMatch(/--ignore-scripts\b/);
    }
    expect(all(runtime, "COPY").some((copy) => copy.args.includes("node_modules"))).toBe(false);
  });

  it("runs `node index.js` in exec form as PID 1, with no shell, npm or entrypoint in between", () => {
    const cmds = all(runtime, "CMD");
    expect(cmds).toHaveLength(1);
    expect(execForm(cmds[0]!.args)).toEqual(["node", "index.js"]);
    expect(all(runtime, "ENTRYPOINT")).toEqual([]);
    expect(existsSync(join(REPO, "index.js"))).toBe(true);
  });

  it("switches to a user that is not root before the command", () => {
    const users = all(runtime, "USER");
    expect(users.length).toBeGreaterThan(0);
    const user = users.at(-1)!;
    const [name, group] = user.args.split(":");
    expect(["root", "0"]).not.toContain(name);
    expect(["root", "0"]).not.toContain(group ?? "");
    expect(user.line).toBeLessThan(all(runtime, "CMD")[0]!.line);
  });

  it("sets only variables the server reads, listens on every interface, and exposes APP_PORT", () => {
    const known = serverVariables();
    expect([...runtimeEnv.keys()].filter((name) => !known.has(name))).toEqual([]);
    expect(runtimeEnv.get("APP_HOST")).toBe("0.0.0.0");
    expect(all(runtime, "EXPOSE").map((expose) => expose.args)).toEqual([runtimeEnv.get("APP_PORT")]);
  });

  it("copies from the build context only files that exist and that .dockerignore lets in", () => {
    const ignore = readFileSync(join(REPO, ".dockerignore"), "utf8")
      .split("\n")
      .map((line) => line.trim())
      .filter((line) => line !== "" && !line.startsWith("#"));
    // An allow-list: everything out, then each path the Dockerfile copies back in.
    expect(ignore[0]).toBe("*");
    const allowed = ignore.slice(1).map((line) => {
      expect(line.startsWith("!")).toBe(true);
      return line.slice(1).replace(/\/$/, "");
    });
    const sources = stages.flatMap((stage) =>
      all(stage, "COPY")
        .filter((copy) => !copy.args.startsWith("--from="))
        .flatMap((copy) => copy.args.split(/\s+/).filter((word) => !word.startsWith("--")).slice(0, -1)),
    );
    expect(sources.length).toBeGreaterThan(0);
    for (const source of sources) {
      expect(existsSync(join(REPO, source)), source).toBe(true);
      expect(allowed.some((path) => source === path || source.startsWith(`${path}/`)), `${source} is let in by .dockerignore`).toBe(true);
    }
    // Nothing built or installed on the host gets in.
    for (const path of allowed) expect(path).not.toMatch(/node_modules|^dist|^\.git|^test/);
  });

  describe("HEALTHCHECK", () => {
    const run = promisify(execFile);
    const healthcheck = all(runtime, "HEALTHCHECK");
    const command = () => {
      expect(healthcheck).toHaveLength(1);
      const exec = execForm(healthcheck[0]!.args.replace(/^(?:--\S+\s+)*CMD\s+/, ""));
      expect(exec?.[0]).toBe("node");
      return exec!;
    };
    const passes = (port: number) =>
      run(process.execPath, command().slice(1), { env: { PATH: process.env.PATH ?? "", APP_PORT: String(port) }, timeout: 10_000 }).then(
        () => true,
        () => false,
      );

    it("asks a route the server answers 200, and passes against a running server", async () => {
      const path = /\/health\/[a-z]+/.exec(command().join(" "))?.[0];
      expect(path).toBeDefined();
      const app = await startServer({ root: CLUSTER_APP });
      try {
        expect((await fetch(`${app.url}${path}`)).status).toBe(200);
        expect(await passes(app.server.address()!.port)).toBe(true);
      } finally {
        await app.close();
      }
    });

    it("fails when nothing answers on APP_PORT", async () => {
      expect(await passes(await closedPort())).toBe(false);
    });
  });
});
