import type { ConnectionEvent } from '../port';
import { SandboxPlatform } from './sandboxPlatform';

const tick = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const open = async (platform: SandboxPlatform, id = 'I1') => {
  const events: ConnectionEvent[] = [];
  const connection = await platform.connect(id, (e) => events.push(e));
  return { events, connection };
};

describe('sandbox platform', () => {
  const fast = { qrIntervalMs: 20, qrCount: 3, sentDelayMs: 5, deliveredDelayMs: 10, readDelayMs: 15 };

  it('issues unique QR codes shaped like WhatsApp ones, then expires the attempt', async () => {
    const platform = new SandboxPlatform(fast);
    const { events } = await open(platform);
    await tick(120);
    const qrs = events.filter((e) => e.type === 'qr').map((e) => (e as { qr: string }).qr);
    expect(qrs).toHaveLength(3);
    expect(new Set(qrs).size).toBe(3);
    expect(qrs[0]!.split(',')).toHaveLength(4);
    expect(events.at(-1)).toEqual({ type: 'disconnected', reason: 'qr_expired' });
    expect(platform.currentQr('I1')).toBeNull();
  });

  it('links on a scan of the current QR, and reconnects a linked instance without a QR', async () => {
    const platform = new SandboxPlatform(fast);
    const first = await open(platform);
    expect(() => platform.scan('other', '491')).toThrow('No QR code');
    platform.scan('I1', '4915112345678');
    expect(first.events.at(-1)).toEqual({ type: 'connected', number: '4915112345678' });
    await first.connection.close();
    const second = await open(platform);
    await tick(20);
    expect(second.events).toEqual([{ type: 'connected', number: '4915112345678' }]);
    await second.connection.close();
  });

  it('acknowledges, delivers and reads a sent message in order; an unknown recipient fails; duplicates are ignored', async () => {
    const platform = new SandboxPlatform(fast);
    const { events, connection } = await open(platform);
    platform.scan('I1', '4915112345678');
    await connection.send({ messageId: 'm1', to: '4915199999999', text: 'hi' });
    await connection.send({ messageId: 'm1', to: '4915199999999', text: 'hi' });
    await connection.send({ messageId: 'm2', to: '0001234567', text: 'nobody' });
    await tick(60);
    const receipts = events.filter((e) => e.type === 'receipt');
    expect(receipts.filter((r) => r.type === 'receipt' && r.messageId === 'm1').map((r) => (r as { status: string }).status)).toEqual(['sent', 'delivered', 'read']);
    expect(receipts.filter((r) => r.type === 'receipt' && r.messageId === 'm2')).toEqual([
      { type: 'receipt', messageId: 'm2', status: 'sent' },
      { type: 'receipt', messageId: 'm2', status: 'failed', reason: 'recipient_not_on_platform' },
    ]);
    expect(platform.sent('I1').map((m) => m.messageId)).toEqual(['m1', 'm2']);
    await connection.close();
  });

  it('refuses sends while not connected and emits nothing after close', async () => {
    const platform = new SandboxPlatform(fast);
    const { events, connection } = await open(platform);
    await expect(connection.send({ messageId: 'm', to: '4915199999999', text: 'x' })).rejects.toThrow('not connected');
    await connection.close();
    const count = events.length;
    await tick(60);
    expect(events).toHaveLength(count);
  });

  it('delivers inbound messages, drops connections, and forgets the link on logout from the phone', async () => {
    const platform = new SandboxPlatform(fast);
    const { events } = await open(platform);
    expect(() => platform.inject('I1', { from: '491', pushName: null, text: 'x', media: null })).toThrow('not connected');
    platform.scan('I1', '4915112345678');
    platform.inject('I1', { from: '4917612345678', pushName: 'Ana', text: 'hello', media: null });
    expect(events.at(-1)).toMatchObject({ type: 'inbound', message: { from: '4917612345678', pushName: 'Ana', text: 'hello' } });
    platform.disconnect('I1', 'connection_lost');
    expect(events.at(-1)).toEqual({ type: 'disconnected', reason: 'connection_lost' });
    const again = await open(platform);
    await tick(20);
    expect(again.events).toEqual([{ type: 'connected', number: '4915112345678' }]);
    platform.logoutFromPhone('I1');
    expect(again.events.at(-1)).toEqual({ type: 'logged_out', reason: 'logged_out_on_phone' });
    const fresh = await open(platform);
    expect(fresh.events[0]?.type).toBe('qr');
    await fresh.connection.close();
  });

  it('lets a new connection replace the open one', async () => {
    const platform = new SandboxPlatform(fast);
    const first = await open(platform);
    const second = await open(platform);
    platform.scan('I1', '4915112345678');
    expect(second.events.at(-1)).toMatchObject({ type: 'connected' });
    expect(first.events.some((e) => e.type === 'connected')).toBe(false);
    await second.connection.close();
  });
});
