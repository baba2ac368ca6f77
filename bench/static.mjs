// Static files and the browser client, against a bare @fastify/static in the same run:
//   - a 28 KB script (a copy of the client) from public/, as it is, in gzip and in brotli
//     (quality 4), compressed per request by @fastify/compress, on the gateway and on a bare
//     Fastify 5 with @fastify/static alone and with @fastify/compress;
//   - /__app/client.js for a browser's Accept-Encoding, sent from the build's .br file
//     (src/static/static-routes.ts);
//   - a revalidation answered 304, on both;
//   - the viewer page (session cookie verified, CSP nonce, bootstrap).
// 50 connections, servers pinned to the server core, interleaved rounds (lib.mjs).
// Target: the client script in brotli costs the gateway at most 1.5× the CPU of the bare
// @fastify/static sending the same script as it is (on-the-fly compression costs ~10×).
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { REPO, ROUNDS, ROUND_SEC, interleaved, borrowed, printTable, ratio, startProcess, target, viewerSession } from "./lib.mjs";

const BARE = join(REPO, "bench/servers/fastify-static.mjs");
/** What Chromium sends. */
const BROWSER = { "accept-encoding": "gzip, deflate, br, zstd" };
const GZIP = { "accept-encoding": "gzip" };
const BR_ONLY = { "accept-encoding": "br" };

export async function benchStatic() {
  const root = mkdtempSync(join(tmpdir(), "counterpart-bench-static-"));
  try {
    mkdirSync(join(root, "public"));
    writeFileSync(join(root, "public/index.html"), "<!doctype html><html><head><title>bench</title></head><body></body></html>");
    copyFileSync(join(REPO, "dist/client/client.js"), join(root, "public/viewer.js"));
    writeFileSync(join(root, "app.config.json"), "{}");
    let gateway;
    let bare;
    let bareCompress;
    const gatewayServer = async () => (gateway ??= await startProcess(join(REPO, "index.js"), ["--port", "$PORT", "--root", root]));
    const bareServer = async () => (bare ??= await startProcess(BARE, [], { STATIC_ROOT: join(root, "public") }));
    const bareCompressServer = async () => (bareCompress ??= await startProcess(BARE, [], { STATIC_ROOT: join(root, "public"), STATIC_COMPRESS: "1" }));
    const etags = new Map();
    const etagOf = async (url, headers) => {
      if (!etags.has(url)) etags.set(url, (await fetch(url, { headers })).headers.get("etag"));
      return etags.get(url);
    };
    const get = (name, server, path, headers = {}, { revalidate = false, session = false } = {}) => ({
      name,
      start: async () => borrowed(await server()),
      async options(running) {
        const url = running.url + path;
        const extra = { ...headers };
        if (revalidate) extra["if-none-match"] = await etagOf(url, headers);
        if (session) extra.cookie = (await viewerSession(running.url)).cookie;
        return { url, headers: extra };
      },
    });
    const rows = await interleaved([
      get("bare @fastify/static, viewer.js as it is", bareServer, "/viewer.js"),
      get("bare + @fastify/compress, viewer.js gzip", bareCompressServer, "/viewer.js", GZIP),
      get("bare + @fastify/compress, viewer.js br", bareCompressServer, "/viewer.js", BR_ONLY),
      get("gateway, viewer.js as it is", gatewayServer, "/viewer.js"),
      get("gateway, viewer.js, a browser's Accept-Encoding (gzip)", gatewayServer, "/viewer.js", BROWSER),
      get("gateway, viewer.js br", gatewayServer, "/viewer.js", BR_ONLY),
      get("gateway, /__app/client.js (the build's br)", gatewayServer, "/__app/client.js", BROWSER),
      get("bare @fastify/static, viewer.js 304", bareServer, "/viewer.js", {}, { revalidate: true }),
      get("gateway, /__app/client.js 304", gatewayServer, "/__app/client.js", BROWSER, { revalidate: true }),
      get("gateway, viewer page (CSP nonce, bootstrap)", gatewayServer, "/", BROWSER, { session: true }),
    ]);
    for (const server of [gateway, bare, bareCompress]) await server?.stop();
    printTable(`Static files, 28 KB script, 50 connections, median of ${ROUNDS} interleaved ${ROUND_SEC}-second rounds`, rows);
    const [bareFile, bareGzip, bareBr, plain, gzip, br, prebuilt, bare304, client304, page] = rows;
    const clientVsBare = prebuilt.cpuUsPerReq / bareFile.cpuUsPerReq;
    console.log(`\ngateway client.js (the build's br) / bare @fastify/static as it is, CPU per request: ${ratio(prebuilt.cpuUsPerReq, bareFile.cpuUsPerReq)} (target <= 1.5)`);
    console.log(`per request, gzip / as it is: gateway ${ratio(gzip.cpuUsPerReq, plain.cpuUsPerReq)}, bare ${ratio(bareGzip.cpuUsPerReq, bareFile.cpuUsPerReq)}; br / gzip: gateway ${ratio(br.cpuUsPerReq, gzip.cpuUsPerReq)}, bare ${ratio(bareBr.cpuUsPerReq, bareGzip.cpuUsPerReq)}`);
    console.log(`gateway / bare @fastify/static, viewer.js as it is: ${ratio(plain.cpuUsPerReq, bareFile.cpuUsPerReq)}; gzip: ${ratio(gzip.cpuUsPerReq, bareGzip.cpuUsPerReq)}; 304: ${ratio(client304.cpuUsPerReq, bare304.cpuUsPerReq)}`);
    return {
      rows,
      targets: [
        target("static", "client.js (the build's br) / bare @fastify/static as it is, CPU µs per request", clientVsBare, { max: 1.5 }),
        target("static", "gateway / bare @fastify/static, viewer.js as it is, CPU", plain.cpuUsPerReq / bareFile.cpuUsPerReq),
        target("static", "viewer.js gzip per request, gateway CPU µs", gzip.cpuUsPerReq, {}, { digits: 1 }),
        target("static", "viewer.js br (quality 4) per request, gateway CPU µs", br.cpuUsPerReq, {}, { digits: 1 }),
        target("static", "client.js from the build's br, gateway CPU µs", prebuilt.cpuUsPerReq, {}, { digits: 1 }),
        target("static", "client.js 304, gateway CPU µs", client304.cpuUsPerReq, {}, { digits: 1 }),
        target("static", "viewer page, gateway CPU µs", page.cpuUsPerReq, {}, { digits: 1 }),
      ],
    };
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await benchStatic();
