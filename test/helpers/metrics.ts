/**
 * Reading `GET /metrics` the way a test needs to: the whole text exposition, and one
 * series' value found by its name and exact label set.
 */

/** The exposition of `url`'s /metrics (200 expected). */
export async function scrape(url: string, headers: Record<string, string> = {}): Promise<string> {
  const answer = await fetch(url + "/metrics", { headers });
  if (answer.status !== 200) throw new Error(`GET /metrics answered ${answer.status}: ${await answer.text()}`);
  return answer.text();
}

/** The value of one series, found by its name and exact label set; undefined when there is none. */
export function sample(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  const wanted = Object.entries(labels)
    .map(([key, value]) => `${key}="${value}"`)
    .sort()
    .join(",");
  for (const line of text.split("\n")) {
    const match = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!match || match[1] !== name) continue;
    const got = (match[2] ?? "").split(/,(?=\w+=")/).filter(Boolean).sort().join(",");
    if (got === wanted) return Number(match[3]);
  }
  return undefined;
}
