import { request, type ClientRequest, type IncomingMessage } from 'node:http';

/** One server-sent event as a reader sees it. */
export interface SseEvent {
  id: string | null;
  event: string;
  data: string;
}

/**
 * A minimal event-stream reader over node:http (the WHATWG parsing rules the tests need: id, event, data, comments),
 * so a test can also pause it like a reader that stops reading.
 */
export class SseReader {
  readonly events: SseEvent[] = [];
  comments = 0;
  status = 0;
  ended = false;
  private buffer = '';
  private response: IncomingMessage | null = null;
  private readonly req: ClientRequest;
  private readonly waiters = new Set<() => void>();

  constructor(url: string, headers: Record<string, string> = {}) {
    this.req = request(url, { headers: { accept: 'text/event-stream', ...headers } });
    this.req.on('error', () => this.finish());
    this.req.end();
  }

  /** Resolves with the status once the answer's head arrived; a non-200 answer's body is read as JSON. */
  opened(): Promise<{ status: number; body: Record<string, unknown> | null }> {
    return new Promise((resolve, reject) => {
      this.req.once('error', reject);
      this.req.once('response', (res) => {
        this.response = res;
        this.status = res.statusCode ?? 0;
        if (this.status !== 200) {
          let text = '';
          res.on('data', (c: Buffer) => (text += c.toString()));
          res.on('end', () => resolve({ status: this.status, body: JSON.parse(text) as Record<string, unknown> }));
          return;
        }
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => this.feed(chunk));
        res.on('close', () => this.finish());
        resolve({ status: this.status, body: null });
      });
    });
  }

  pause(): void {
    this.response?.pause();
  }

  resume(): void {
    this.response?.resume();
  }

  /** The events named `type`, or all but `end` events. */
  received(type?: string): SseEvent[] {
    return this.events.filter((e) => (type ? e.event === type : e.event !== 'end'));
  }

  /** Waits until `ok` holds (bounded); the caller asserts on the events afterwards. */
  async until(ok: (reader: SseReader) => boolean, timeoutMs = 10_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!ok(this) && Date.now() < deadline) {
      await new Promise<void>((resolve) => {
        const wake = (): void => {
          clearTimeout(timer);
          this.waiters.delete(wake);
          resolve();
        };
        const timer = setTimeout(wake, 100);
        this.waiters.add(wake);
      });
    }
  }

  close(): void {
    this.req.destroy();
  }

  private finish(): void {
    this.ended = true;
    this.wake();
  }

  private wake(): void {
    for (const w of this.waiters) w();
  }

  private feed(chunk: string): void {
    this.buffer += chunk;
    let end: number;
    while ((end = this.buffer.indexOf('\n\n')) >= 0) {
      const block = this.buffer.slice(0, end);
      this.buffer = this.buffer.slice(end + 2);
      const event: SseEvent = { id: null, event: 'message', data: '' };
      let fields = 0;
      for (const line of block.split('\n')) {
        if (line.startsWith(':')) {
          this.comments++;
          continue;
        }
        const colon = line.indexOf(':');
        const [name, value] = colon < 0 ? [line, ''] : [line.slice(0, colon), line.slice(colon + 1).replace(/^ /, '')];
        fields++;
        if (name === 'id') event.id = value;
        else if (name === 'event') event.event = value;
        else if (name === 'data') event.data = event.data ? `${event.data}\n${value}` : value;
      }
      if (fields > 0 && (event.data || event.id)) this.events.push(event);
    }
    this.wake();
  }
}
