import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import { Webhook } from 'standardwebhooks';

export interface Received {
  path: string;
  id: string;
  body: { id: string; type: string; instance_id: string; timestamp: string; data: Record<string, unknown> };
  at: number;
}

/** How the receiver answers a request: a status (and headers), or `hang` to never answer. */
export type Reply = { status: number; headers?: Record<string, string> } | 'hang';

/**
 * A webhook endpoint for tests on 127.0.0.1. Every request's Standard Webhooks signature is verified with the
 * `standardwebhooks` package against the secret registered for its path; a bad signature fails the test run.
 */
export class WebhookReceiver {
  readonly received: Received[] = [];
  readonly rejected: string[] = [];
  private readonly secrets = new Map<string, string>();
  private readonly scripts = new Map<string, Reply[]>();
  private readonly hanging = new Set<ServerResponse>();
  private server: Server | null = null;
  private port = 0;

  async start(): Promise<void> {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => this.handle(req.url ?? '/', req.headers, Buffer.concat(chunks).toString('utf8'), res));
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    const address = this.server.address();
    this.port = typeof address === 'object' && address ? address.port : 0;
  }

  url(path: string): string {
    return `http://127.0.0.1:${this.port}${path}`;
  }

  /** Registers the signing secret for a path (from set_webhook's answer). */
  secret(path: string, secret: string): void {
    this.secrets.set(path, secret);
  }

  /** Replies to the next requests on `path` in this order, then 200. */
  script(path: string, ...replies: Reply[]): void {
    this.scripts.set(path, replies);
  }

  on(path: string): Received[] {
    return this.received.filter((r) => r.path === path);
  }

  /** Waits until `path` has received `count` verified requests (at most `timeoutMs`). */
  async waitFor(path: string, count: number, timeoutMs = 10_000): Promise<Received[]> {
    const deadline = Date.now() + timeoutMs;
    while (this.on(path).length < count) {
      if (Date.now() > deadline) throw new Error(`${path}: ${this.on(path).length} of ${count} deliveries arrived`);
      await new Promise((r) => setTimeout(r, 20));
    }
    return this.on(path);
  }

  async stop(): Promise<void> {
    for (const res of this.hanging) res.destroy();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
    this.server?.closeAllConnections();
  }

  private handle(path: string, headers: IncomingHttpHeaders, raw: string, res: ServerResponse): void {
    const secret = this.secrets.get(path);
    try {
      if (!secret) throw new Error('no secret registered');
      new Webhook(secret).verify(raw, {
        'webhook-id': String(headers['webhook-id']),
        'webhook-timestamp': String(headers['webhook-timestamp']),
        'webhook-signature': String(headers['webhook-signature']),
      });
    } catch (error) {
      this.rejected.push(`${path}: ${String(error)}`);
      res.writeHead(400).end();
      return;
    }
    const reply = this.scripts.get(path)?.shift() ?? { status: 200 };
    this.received.push({ path, id: String(headers['webhook-id']), body: JSON.parse(raw) as Received['body'], at: Date.now() });
    if (reply === 'hang') {
      this.hanging.add(res);
      return;
    }
    res.writeHead(reply.status, reply.headers).end('ok');
  }
}
