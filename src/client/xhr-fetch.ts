/**
 * fetch has no upload progress, so a request with `onUploadProgress` goes through
 * XMLHttpRequest instead (docs/guides/browser.md "Request options"): same URL, headers,
 * body and abort, answered as a fetch `Response` so everything after the send is shared.
 * A `ReadableStream` body cannot go this way; it is sent with fetch, without progress.
 */

export type UploadProgress = (loaded: number, total: number) => void;

export function xhrFetch(url: string, init: { method: string; headers: Headers; body: BodyInit | undefined; signal: AbortSignal }, onUploadProgress: UploadProgress): Promise<Response> {
  return new Promise<Response>((resolve, reject) => {
    const { signal } = init;
    if (signal.aborted) return reject(signal.reason);
    const xhr = new XMLHttpRequest();
    xhr.open(init.method, url, true);
    xhr.responseType = "blob";
    init.headers.forEach((value, name) => xhr.setRequestHeader(name, value));
    // Registered before send, or the browser may not report upload progress at all.
    xhr.upload.addEventListener("progress", (event) => {
      if (event.lengthComputable) onUploadProgress(event.loaded, event.total);
    });
    const onAbort = () => xhr.abort();
    signal.addEventListener("abort", onAbort, { once: true });
    const done = () => signal.removeEventListener("abort", onAbort);
    xhr.addEventListener("load", () => {
      done();
      const empty = xhr.status === 204 || xhr.status === 205 || xhr.status === 304 || init.method === "HEAD";
      resolve(new Response(empty ? null : (xhr.response as Blob), { status: xhr.status, statusText: xhr.statusText, headers: parseHeaders(xhr.getAllResponseHeaders()) }));
    });
    // Reported as fetch reports a network failure, so the retry rules see the same thing.
    xhr.addEventListener("error", () => {
      done();
      reject(new TypeError("Failed to fetch"));
    });
    xhr.addEventListener("abort", () => {
      done();
      reject(signal.reason);
    });
    xhr.send((init.body ?? null) as XMLHttpRequestBodyInit | null);
  });
}

function parseHeaders(raw: string): Headers {
  const headers = new Headers();
  for (const line of raw.trim().split(/[\r\n]+/)) {
    const colon = line.indexOf(":");
    if (colon <= 0) continue;
    try {
      headers.append(line.slice(0, colon).trim(), line.slice(colon + 1).trim());
    } catch {
      // A header the Headers class refuses is not one the client reads.
    }
  }
  return headers;
}
