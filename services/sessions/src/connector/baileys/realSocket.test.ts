import { createServer, type Socket } from 'node:net';
import { testLogger } from '../../../../../test/harness/logger';
import type { ConnectionEvent } from '../port';
import { BaileysConnector } from './baileysConnector';
import { AuthStateStore } from './kvAuthState';
import { SentMessageStore } from './sentStore';
import { MemoryTextBucket } from './textBucket';

/** A loopback port nothing listens on. */
const closedPort = async (): Promise<number> => {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (address === null || typeof address === 'string') throw new Error('no port');
  return address.port;
};

const connectorTo = (port: number): BaileysConnector => {
  const logger = testLogger('baileys-real');
  return new BaileysConnector({
    auth: new AuthStateStore(new MemoryTextBucket(), logger),
    sent: new SentMessageStore(new MemoryTextBucket()),
    logger,
    options: { webSocketUrl: `ws://127.0.0.1:${port}/ws/chat`, connectTimeoutMs: 2_000 },
  });
};

describe('the baileys connector over a real Baileys socket', () => {
  it('reports a server it cannot reach as disconnected, once', async () => {
    const connector = connectorTo(await closedPort());
    const events: ConnectionEvent[] = [];
    const ended = new Promise<void>((resolve) => {
      void connector.connect('REAL1', (event) => {
        events.push(event);
        resolve();
      });
    });
    await ended;
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ type: 'disconnected' });
  });

  it('closes quietly while the WebSocket handshake is still pending', async () => {
    const peers: Socket[] = [];
    const silent = createServer((peer) => peers.push(peer));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const { port } = silent.address() as { port: number };
    const events: ConnectionEvent[] = [];
    const connection = await connectorTo(port).connect('REAL2', (event) => events.push(event));
    while (peers.length === 0) await new Promise((resolve) => setTimeout(resolve, 10));
    await connection.close();
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(events).toEqual([]);
    peers.forEach((peer) => peer.destroy());
    await new Promise<void>((resolve) => silent.close(() => resolve()));
  });
});
