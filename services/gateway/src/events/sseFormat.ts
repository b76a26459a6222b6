/**
 * Server-sent events framing (WHATWG HTML, "Server-sent events"): fields `id`, `event`, `data`, a blank line ends
 * an event; a line starting with `:` is a comment (heartbeats). JSON from JSON.stringify holds no raw line breaks,
 * so each payload is one `data:` line.
 */
export const sseEvent = (id: string, type: string, json: string): string => `id: ${id}\nevent: ${type}\ndata: ${json}\n\n`;

/**
 * The last event of a stream that the gateway ends (`end`, with `{ error, code }`). It carries no id: a reader that
 * reconnects resumes after the last event it did get. Not named `error`, which EventSource reserves.
 */
export const sseEnd = (error: string, code: string): string => `event: end\ndata: ${JSON.stringify({ error, code })}\n\n`;

export const sseComment = (text: string): string => `: ${text}\n\n`;

/** How long a browser waits before it reconnects (EventSource's `retry` field). */
export const sseRetry = (ms: number): string => `retry: ${ms}\n\n`;
