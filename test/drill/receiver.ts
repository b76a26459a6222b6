import { createServer, type Server } from 'node:http';
import type { ReceivedWebhook } from './drill';

/**
 * The drill's webhook receiver: answers every POST 200 and records it raw (body and the Standard Webhooks
 * headers), so the drill verifies signatures itself and the receiver needs no secret. `GET /__received?from=N`
 * answers the records from index N as JSON: a receiver running elsewhere (a container) can be read that way.
 */
export class RawWebhookReceiver {
  readonly received: ReceivedWebhook[] = [];
  private server: Server | null = null;
  private port = 0;

  constructor(private readonly host = '127.0.0.1') {}

  async start(port = 0): Promise<void> {
    this.server = createServer((req, res) => {
      const url = new URL(req.url ?? '/', 'http://receiver');
      if (req.method === 'GET' && url.pathname === '/__received') {
        const from = Math.max(0, Number(url.searchParams.get('from') ?? 0) || 0);
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(this.received.slice(from)));
        return;
      }
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const header = (name: string): string => String(req.headers[name] ?? '');
        this.received.push({
          path: url.pathname,
          headers: { 'webhook-id': header('webhook-id'), 'webhook-timestamp': header('webhook-timestamp'), 'webhook-signature': header('webhook-signature') },
          body: Buffer.concat(chunks).toString('utf8'),
          at: Date.now(),
        });
        res.writeHead(200).end('ok');
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(port, this.host, resolve));
    const address = this.server.address();
    this.port = typeof address === 'object' && address ? address.port : 0;
  }

  url(path: string): string {
    return `http://${this.host}:${this.port}${path}`;
  }

  async stop(): Promise<void> {
    const server = this.server;
    if (!server) return;
    // Keep-alive connections of the webhooks services would hold close() open: end them too.
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    server.closeAllConnections();
    await closed;
  }
}
