import { apiErrorOf, authHeaders, token, type ApiError, type Json } from './api.js';

/** A live event as `/v1/events` sends it: the webhook body. */
export interface LiveEvent {
  id: string;
  type: string;
  instance_id: string;
  timestamp: string;
  data: Record<string, unknown>;
}

export type LiveStatus = 'connecting' | 'live' | 'reconnecting';

/**
 * Follows `/v1/events` with fetch rather than EventSource, so the token travels in the Authorization header and never
 * in a URL. Reconnects (with Last-Event-ID, so nothing is missed) until stopped; a 401 ends it.
 */
export const followEvents = (
  query: Record<string, string>,
  onEvent: (event: LiveEvent) => void,
  onStatus: (status: LiveStatus) => void,
  onUnauthorized: (error: ApiError) => void,
): (() => void) => {
  const controller = new AbortController();
  let lastEventId = '';
  const run = async (): Promise<void> => {
    for (let attempt = 0; !controller.signal.aborted; attempt++) {
      onStatus(attempt === 0 ? 'connecting' : 'reconnecting');
      try {
        const headers: Record<string, string> = { ...authHeaders(), accept: 'text/event-stream' };
        if (lastEventId) headers['last-event-id'] = lastEventId;
        const response = await fetch(`/v1/events?${new URLSearchParams(query).toString()}`, { headers, signal: controller.signal });
        if (response.status === 401) {
          // Its code (invalid, expired, revoked) tells the person on the sign-in page what to do.
          const body = (await response.json().catch(() => ({}))) as Json;
          token.clear();
          onUnauthorized(apiErrorOf(response, body));
          return;
        }
        if (response.ok && response.body) {
          onStatus('live');
          attempt = 0;
          await readStream(response.body, (id, type, data) => {
            if (type === 'end' || !id) return;
            lastEventId = id;
            onEvent(JSON.parse(data) as LiveEvent);
          });
        }
      } catch {
        // A dropped connection: reconnect below.
      }
      if (controller.signal.aborted) return;
      await new Promise((resolve) => setTimeout(resolve, Math.min(10_000, 1_000 * 2 ** Math.min(attempt, 4))));
    }
  };
  void run();
  return () => controller.abort();
};

/** Parses a text/event-stream body (id, event and data fields; comments skipped). */
const readStream = async (body: ReadableStream<Uint8Array>, emit: (id: string, type: string, data: string) => void): Promise<void> => {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buffer += decoder.decode(value, { stream: true });
    let end: number;
    while ((end = buffer.indexOf('\n\n')) >= 0) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      let id = '';
      let type = 'message';
      const data: string[] = [];
      for (const line of block.split('\n')) {
        if (line.startsWith('id: ')) id = line.slice(4);
        else if (line.startsWith('event: ')) type = line.slice(7);
        else if (line.startsWith('data: ')) data.push(line.slice(6));
      }
      if (data.length > 0) emit(id, type, data.join('\n'));
    }
  }
};
