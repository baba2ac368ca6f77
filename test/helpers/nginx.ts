/**
 * A real nginx (Debian's package) in front of a server under test, on a free loopback
 * port, with its files in a temp folder: for what only a real reverse proxy shows, such as
 * whether a streaming answer reaches the client line by line.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe } from "vitest";
import { closedPort } from "./http.js";
import { REPO } from "./process.js";

export const NGINX_PATH = process.env.NGINX_PATH ?? "/usr/sbin/nginx";
const nginxFound = existsSync(NGINX_PATH);

/** `describe`, or `describe.skip` when nginx is missing outside CI (under CI=true it must run). */
export const describeWithNginx: typeof describe = nginxFound || process.env.CI === "true" ? describe : (describe.skip as typeof describe);

/**
 * docs/guides/deployment.md's nginx example as the directives of one location, ready for
 * `startNginx`: the server-wide `proxy_*` directives and those of its `location <path> { … }`,
 * but the `proxy_pass` (startNginx names the upstream). The tests run what the doc shows.
 */
export function docsNginxLocation(path: string): string {
  const docs = readFileSync(join(REPO, "docs/guides/deployment.md"), "utf8");
  const example = /```nginx\n([\s\S]*?)```/.exec(docs.slice(docs.indexOf("### nginx")))?.[1];
  if (example === undefined) throw new Error("docs/guides/deployment.md has no nginx example under ### nginx");
  const server = example.slice(example.indexOf("server {"));
  const escaped = path.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");
  const location = new RegExp(`\n {4}location ${escaped} \\{\n([\\s\\S]*?)\n {4}\\}`).exec(server)?.[1];
  if (location === undefined) throw new Error(`docs/guides/deployment.md's nginx example has no location ${path} block`);
  const serverWide = server
    .replace(/\n {4}location [^\n]*\{[\s\S]*?\n {4}\}/g, "")
    .split("\n")
    .filter((line) => /^ {4}proxy_/.test(line));
  return [...serverWide, ...location.split("\n")].filter((line) => !/^\s*proxy_pass\s/.test(line)).join("\n");
}

export interface Nginx {
  url: string;
  /** What nginx logged (warnings and errors): which upstream failed, and how. */
  errorLog(): Promise<string>;
  stop(): Promise<void>;
}

/**
 * Starts nginx proxying every path to `upstreamUrl` (or to each of several, round robin,
 * as to several hosts) with the `location` directives given.
 */
export async function startNginx(upstreamUrl: string | readonly string[], locationDirectives: string): Promise<Nginx> {
  if (!nginxFound) throw new Error(`nginx not found at ${NGINX_PATH}: install it (apt-get install nginx) or set NGINX_PATH`);
  const dir = await mkdtemp(join(tmpdir(), "nginx-"));
  const port = await closedPort();
  const servers = (typeof upstreamUrl === "string" ? [upstreamUrl] : upstreamUrl).map((url) => `server ${new URL(url).host};`).join(" ");
  // worker_connections counts client and upstream connections together: at 64, a test's
  // 32 keep-alive clients and their upstream connections reached it on a busy machine, and
  // nginx then closed idle client connections a client was about to reuse (socket hang up).
  const config = `
${process.getuid?.() === 0 ? "user root;" : ""}
daemon off;
master_process off;
worker_processes 1;
pid ${dir}/nginx.pid;
error_log ${dir}/error.log warn;
events { worker_connections 1024; }
http {
  access_log off;
  client_body_temp_path ${dir}/body;
  proxy_temp_path ${dir}/proxy;
  fastcgi_temp_path ${dir}/fastcgi;
  uwsgi_temp_path ${dir}/uwsgi;
  scgi_temp_path ${dir}/scgi;
  upstream app { ${servers} keepalive 8; }
  server {
    listen 127.0.0.1:${port};
    location / {
      proxy_pass http://app;
${locationDirectives}
    }
  }
}
`;
  await writeFile(join(dir, "nginx.conf"), config);
  const child: ChildProcess = spawn(NGINX_PATH, ["-p", dir, "-c", join(dir, "nginx.conf")], { stdio: ["ignore", "ignore", "pipe"] });
  let stderr = "";
  child.stderr?.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  const url = `http://127.0.0.1:${port}`;
  // Ready once it answers; a failed start (a bad directive) exits with its reason.
  const deadline = Date.now() + 5_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`nginx exited: ${stderr}`);
    try {
      await fetch(`${url}/health`);
      break;
    } catch {
      if (Date.now() > deadline) throw new Error(`nginx did not start: ${stderr}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
  return {
    url,
    errorLog: () => readFile(join(dir, "error.log"), "utf8").catch(() => ""),
    async stop() {
      if (child.exitCode === null) {
        const exited = new Promise((resolve) => child.once("exit", resolve));
        child.kill("SIGTERM");
        await exited;
      }
      await rm(dir, { recursive: true, force: true });
    },
  };
}
