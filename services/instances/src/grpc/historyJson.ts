/** A page's events (HistoryPage.json: each event's JSON text, see eventJson) as a JSON array. */
export const eventsJson = (json: string[]): string => `[${json.join(',')}]`;

/** A page's events (HistoryPage.json) as NDJSON: one line each, each ending in a newline. */
export const eventsNdjson = (json: string[]): Buffer => Buffer.from(json.map((text) => `${text}\n`).join(''));
