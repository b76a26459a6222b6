import type { Connection, ConnectionEvent } from '../port';
import { MemorySandboxLedger } from './ledger';
import { SandboxPlatform, type SandboxOptions } from './sandboxPlatform';

const fast: SandboxOptions = { qrIntervalMs: 20, qrCount: 3, sentDelayMs: 5, deliveredDelayMs: 10, readDelayMs: 15 };
const NUMBER = '4915112345678';
const CONTACT = '4915199999999';

interface Opened {
  events: ConnectionEvent[];
  connection: Connection;
}

const open = async (platform: SandboxPlatform, id = 'I1'): Promise<Opened> => {
  const events: ConnectionEvent[] = [];
  const connection = await platform.connect(id, (e) => events.push(e));
  return { events, connection };
};

/** An instance linked by a scan, its connection online. */
const linked = async (platform: SandboxPlatform, id = 'I1'): Promise<Opened> => {
  const opened = await open(platform, id);
  await platform.scan(id, NUMBER);
  return opened;
};

const qrs = (events: ConnectionEvent[]): string[] => events.flatMap((e) => (e.type === 'qr' ? [e.qr] : []));
const receipts = (events: ConnectionEvent[]): string[] =>
  events.flatMap((e) => (e.type === 'receipt' ? [`${e.messageId}:${e.status}${e.reason ? `:${e.reason}` : ''}`] : []));
const types = (events: ConnectionEvent[]): string[] => events.map((e) => e.type);

describe('sandbox platform (fake timers)', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  describe('QR codes', () => {
    it('shows a QR code at once and a fresh one every qrIntervalMs, each unique and shaped like WhatsApp Web ones', async () => {
      const platform = new SandboxPlatform(fast);
      const { events, connection } = await open(platform);
      expect(types(events)).toEqual(['qr']);
      expect(platform.currentQr('I1')).toBe(qrs(events)[0]);

      jest.advanceTimersByTime(19);
      expect(qrs(events)).toHaveLength(1);
      jest.advanceTimersByTime(1);
      expect(qrs(events)).toHaveLength(2);
      expect(platform.currentQr('I1')).toBe(qrs(events)[1]);
      jest.advanceTimersByTime(20);

      const codes = qrs(events);
      expect(codes).toHaveLength(3);
      expect(new Set(codes).size).toBe(3);
      for (const code of codes) {
        const [ref, noise, identity, adv, ...rest] = code.split(',');
        expect(rest).toEqual([]);
        expect(ref).toMatch(/^2@[A-Za-z0-9+/]+=*$/);
        for (const key of [noise, identity, adv]) expect(Buffer.from(key!, 'base64')).toHaveLength(32);
      }
      await connection.close();
    });

    it('ends the attempt when the last QR code expires: disconnected (qr_expired), then silence', async () => {
      const platform = new SandboxPlatform(fast);
      const { events } = await open(platform);
      jest.advanceTimersByTime(59);
      expect(types(events)).toEqual(['qr', 'qr', 'qr']);
      jest.advanceTimersByTime(1);
      expect(events.at(-1)).toEqual({ type: 'disconnected', reason: 'qr_expired' });
      expect(platform.currentQr('I1')).toBeNull();
      expect(jest.getTimerCount()).toBe(0);
      await expect(platform.scan('I1', NUMBER)).rejects.toThrow('No QR code');
      jest.advanceTimersByTime(1_000);
      expect(events).toHaveLength(4);
    });

    it('uses the defaults: five codes, 20 s apart', async () => {
      const platform = new SandboxPlatform();
      const { events } = await open(platform);
      jest.advanceTimersByTime(99_999);
      expect(qrs(events)).toHaveLength(5);
      expect(types(events)).not.toContain('disconnected');
      jest.advanceTimersByTime(1);
      expect(events.at(-1)).toEqual({ type: 'disconnected', reason: 'qr_expired' });
    });

    it('offers new QR codes on the next connection after an expiry', async () => {
      const platform = new SandboxPlatform(fast);
      const first = await open(platform);
      jest.advanceTimersByTime(60);
      const second = await open(platform);
      expect(types(second.events)).toEqual(['qr']);
      expect(qrs(first.events)).not.toContain(qrs(second.events)[0]);
      await second.connection.close();
    });
  });

  describe('linking', () => {
    it('links on a scan of the current QR code: connected with the number, no more QR codes', async () => {
      const platform = new SandboxPlatform(fast);
      const { events, connection } = await open(platform);
      jest.advanceTimersByTime(25);
      await platform.scan('I1', NUMBER);
      expect(events.at(-1)).toEqual({ type: 'connected', number: NUMBER });
      expect(platform.currentQr('I1')).toBeNull();
      expect(await platform.linkedNumber('I1')).toBe(NUMBER);
      expect(jest.getTimerCount()).toBe(0);
      jest.advanceTimersByTime(1_000);
      expect(types(events)).toEqual(['qr', 'qr', 'connected']);
      await connection.close();
    });

    it('refuses a scan without a QR code waiting, or with a number that is not digits', async () => {
      const platform = new SandboxPlatform(fast);
      await expect(platform.scan('I1', NUMBER)).rejects.toThrow(/No QR code of instance I1 is waiting/);
      const { connection } = await open(platform);
      await expect(platform.scan('I1', '+4915112345678')).rejects.toThrow(/digits/);
      expect(await platform.linkedNumber('I1')).toBeNull();
      await platform.scan('I1', NUMBER);
      await expect(platform.scan('I1', NUMBER)).rejects.toThrow('No QR code');
      await connection.close();
    });

    it('connects a linked instance again without a QR code, shortly after connect resolves', async () => {
      const platform = new SandboxPlatform(fast);
      const first = await linked(platform);
      await first.connection.close();
      const second = await open(platform);
      expect(second.events).toEqual([]);
      expect(platform.currentQr('I1')).toBeNull();
      await expect(platform.scan('I1', NUMBER)).rejects.toThrow('No QR code');
      jest.advanceTimersByTime(0);
      expect(second.events).toEqual([{ type: 'connected', number: NUMBER }]);
      jest.advanceTimersByTime(1_000);
      expect(second.events).toHaveLength(1);
      await second.connection.close();
    });

    it('keeps instances apart', async () => {
      const platform = new SandboxPlatform(fast);
      const a = await linked(platform, 'A');
      const b = await open(platform, 'B');
      expect(await platform.linkedNumber('B')).toBeNull();
      expect(types(b.events)).toEqual(['qr']);
      await a.connection.send({ messageId: 'm', to: CONTACT, text: 'x' });
      expect(platform.sent('B')).toEqual([]);
      expect(() => platform.inject('B', { from: CONTACT, pushName: null, text: 'x', media: null })).toThrow('not connected');
      await Promise.all([a.connection.close(), b.connection.close()]);
    });
  });

  describe('sending', () => {
    it('resolves once accepted, then reports sent, delivered and read at their delays', async () => {
      const platform = new SandboxPlatform(fast);
      const { events, connection } = await linked(platform);
      await connection.send({ messageId: 'm1', to: CONTACT, text: 'hi' });
      expect(receipts(events)).toEqual([]);
      jest.advanceTimersByTime(5);
      expect(receipts(events)).toEqual(['m1:sent']);
      jest.advanceTimersByTime(5);
      expect(receipts(events)).toEqual(['m1:sent', 'm1:delivered']);
      jest.advanceTimersByTime(4);
      expect(receipts(events)).toEqual(['m1:sent', 'm1:delivered']);
      jest.advanceTimersByTime(1);
      expect(receipts(events)).toEqual(['m1:sent', 'm1:delivered', 'm1:read']);
      expect(events.filter((e) => e.type === 'receipt')[0]).toEqual({ type: 'receipt', messageId: 'm1', status: 'sent' });
      expect(jest.getTimerCount()).toBe(0);
      await connection.close();
    });

    it('interleaves the receipts of several messages by time, each message in order', async () => {
      const platform = new SandboxPlatform(fast);
      const { events, connection } = await linked(platform);
      await connection.send({ messageId: 'a', to: CONTACT, text: '1' });
      jest.advanceTimersByTime(7);
      await connection.send({ messageId: 'b', to: CONTACT, text: '2' });
      jest.advanceTimersByTime(100);
      expect(receipts(events)).toEqual(['a:sent', 'a:delivered', 'b:sent', 'a:read', 'b:delivered', 'b:read']);
      await connection.close();
    });

    it('keeps the order sent, delivered, read even when the delays are configured out of order', async () => {
      const platform = new SandboxPlatform({ ...fast, sentDelayMs: 30, deliveredDelayMs: 10, readDelayMs: 0 });
      const { events, connection } = await linked(platform);
      await connection.send({ messageId: 'm', to: CONTACT, text: 'x' });
      jest.advanceTimersByTime(29);
      expect(receipts(events)).toEqual([]);
      jest.advanceTimersByTime(1);
      expect(receipts(events)).toEqual(['m:sent', 'm:delivered', 'm:read']);
      await connection.close();
    });

    it('fails a message to a number starting with 000: recipient_not_on_platform, never sent, delivered or read (as WhatsApp)', async () => {
      const platform = new SandboxPlatform(fast);
      const { events, connection } = await linked(platform);
      await connection.send({ messageId: 'm2', to: '0001234567', text: 'nobody' });
      jest.advanceTimersByTime(100);
      expect(events.filter((e) => e.type === 'receipt')).toEqual([{ type: 'receipt', messageId: 'm2', status: 'failed', reason: 'recipient_not_on_platform' }]);
      expect(platform.sent('I1').map((m) => m.to)).toEqual(['0001234567']);
      await connection.close();
    });

    it('records every accepted message, text and media, for inspection', async () => {
      const platform = new SandboxPlatform({ ...fast, now: () => new Date('2026-11-22T10:00:00.000Z') });
      const { connection } = await linked(platform);
      await connection.send({ messageId: 't', to: CONTACT, text: 'hello' });
      await connection.send({ messageId: 'i', to: CONTACT, media: { data: Buffer.alloc(2048), mimetype: 'image/png', caption: 'look' } });
      await connection.send({ messageId: 'd', to: CONTACT, media: { data: Buffer.alloc(10), mimetype: 'application/pdf', filename: 'Q3.pdf' } });
      const at = '2026-11-22T10:00:00.000Z';
      expect(platform.sent('I1')).toEqual([
        { instanceId: 'I1', messageId: 't', to: CONTACT, text: 'hello', media: null, acceptedAt: at },
        {
          instanceId: 'I1',
          messageId: 'i',
          to: CONTACT,
          text: null,
          media: { mimetype: 'image/png', filename: null, size: 2048, caption: 'look', voiceNote: false },
          acceptedAt: at,
        },
        {
          instanceId: 'I1',
          messageId: 'd',
          to: CONTACT,
          text: null,
          media: { mimetype: 'application/pdf', filename: 'Q3.pdf', size: 10, caption: null, voiceNote: false },
          acceptedAt: at,
        },
      ]);
      platform.sent('I1').pop();
      expect(platform.sent('I1')).toHaveLength(3);
      await connection.close();
    });

    it('sends a message id once: a repeat is only acknowledged again (sent), as WhatsApp acks every hand-over', async () => {
      const platform = new SandboxPlatform(fast);
      const { events, connection } = await linked(platform);
      await connection.send({ messageId: 'm', to: CONTACT, text: 'x' });
      await connection.send({ messageId: 'm', to: CONTACT, text: 'x' });
      jest.advanceTimersByTime(100);
      expect(platform.sent('I1')).toHaveLength(1);
      expect(receipts(events)).toEqual(['m:sent', 'm:sent', 'm:delivered', 'm:read']);
      await connection.close();
    });

    it('acknowledges a repeat whose first attempt was taken while its caller saw a failure, once', async () => {
      // The ledger stores the id, then the caller's connection drops before the answer (seen in the cluster drill).
      const ledger = new MemorySandboxLedger();
      const take = ledger.takeMessageId.bind(ledger);
      let failNext = true;
      ledger.takeMessageId = async (instanceId, messageId) => {
        const taken = await take(instanceId, messageId);
        if (failNext) {
          failNext = false;
          throw new Error('The connection to NATS dropped while a request was waiting');
        }
        return taken;
      };
      const platform = new SandboxPlatform({ ...fast, ledger });
      const { events, connection } = await linked(platform);
      await expect(connection.send({ messageId: 'm', to: CONTACT, text: 'x' })).rejects.toThrow('dropped');
      await connection.send({ messageId: 'm', to: CONTACT, text: 'x' });
      await connection.send({ messageId: 'm', to: CONTACT, text: 'x' });
      jest.advanceTimersByTime(100);
      expect(platform.sent('I1')).toHaveLength(1);
      // Its receipts once, and the second repeat's acknowledgement (the event store keeps each receipt once).
      expect(receipts(events)).toEqual(['m:sent', 'm:sent', 'm:delivered', 'm:read']);
      await connection.close();
    });

    it('rejects a send while not connected (showing a QR code, linking, closed, dropped) and records nothing', async () => {
      const platform = new SandboxPlatform(fast);
      const message = { messageId: 'm', to: CONTACT, text: 'x' };
      const waiting = await open(platform);
      await expect(waiting.connection.send(message)).rejects.toThrow('not connected');
      await platform.scan('I1', NUMBER);
      await waiting.connection.close();
      await expect(waiting.connection.send(message)).rejects.toThrow('not connected');
      const linking = await open(platform);
      await expect(linking.connection.send(message)).rejects.toThrow('not connected');
      jest.advanceTimersByTime(0);
      platform.disconnect('I1', 'connection_lost');
      await expect(linking.connection.send(message)).rejects.toThrow('not connected');
      expect(platform.sent('I1')).toEqual([]);
    });

    it('rejects a recipient that is not digits and a message with neither text nor media', async () => {
      const platform = new SandboxPlatform(fast);
      const { connection } = await linked(platform);
      await expect(connection.send({ messageId: 'a', to: '+4915199999999', text: 'x' })).rejects.toThrow(/digits/);
      await expect(connection.send({ messageId: 'b', to: CONTACT })).rejects.toThrow('text or media');
      expect(platform.sent('I1')).toEqual([]);
      await connection.close();
    });
  });

  describe('restrictions', () => {
    it('refuses sends of a restricted account as account_restricted and tells the connection; a send taken after the end only has its receipts', async () => {
      const platform = new SandboxPlatform(fast);
      const { events, connection } = await linked(platform);
      platform.restrict('I1', null);
      expect(events.at(-1)?.type).toBe('connected'); // an unknown end shows at the next send
      await connection.send({ messageId: 'm1', to: CONTACT, text: 'refused' });
      jest.advanceTimersByTime(5);
      expect(events.slice(-2)).toEqual([
        { type: 'restricted', until: null },
        { type: 'receipt', messageId: 'm1', status: 'failed', reason: 'account_restricted' },
      ]);
      expect(platform.sent('I1')).toEqual([]);
      platform.lift('I1');
      expect(events.at(-1)).toEqual({ type: 'unrestricted' });
      const until = Date.now() + 1_000;
      platform.restrict('I1', until);
      expect(events.at(-1)).toEqual({ type: 'restricted', until: new Date(until).toISOString() });
      jest.setSystemTime(until);
      const told = events.length;
      await connection.send({ messageId: 'm2', to: CONTACT, text: 'after the end' });
      jest.advanceTimersByTime(5);
      // Whether the restriction is over is the session's to conclude from the `sent` receipt, not the platform's to say.
      expect(events.slice(told)).toEqual([{ type: 'receipt', messageId: 'm2', status: 'sent' }]);
      expect(platform.sent('I1').map((m) => m.messageId)).toEqual(['m2']);
      // Nothing told since the platform took a send: lifting now is no news to the connection.
      platform.lift('I1');
      expect(events.slice(told)).toEqual([{ type: 'receipt', messageId: 'm2', status: 'sent' }]);
      await connection.close();
    });
  });

  describe('inbound messages', () => {
    it('reports an injected message on the connected connection, with a generated id and timestamp', async () => {
      const platform = new SandboxPlatform({ ...fast, now: () => new Date('2026-11-22T10:00:00.000Z') });
      const { events, connection } = await linked(platform);
      const message = platform.inject('I1', { from: '4917612345678', pushName: 'Ana', text: 'hello', media: null });
      expect(events.at(-1)).toEqual({ type: 'inbound', message });
      expect(message).toEqual({
        platformMessageId: expect.stringMatching(/^3EB0[0-9A-F]{20}$/),
        from: '4917612345678',
        pushName: 'Ana',
        text: 'hello',
        media: null,
        timestamp: '2026-11-22T10:00:00.000Z',
        ref: expect.any(String),
      });
      const other = platform.inject('I1', { from: '4917612345678', pushName: null, text: 'again', media: null });
      expect(other.platformMessageId).not.toBe(message.platformMessageId);
      await connection.close();
    });

    it('keeps a given id and timestamp, and makes the media file it describes, served from its ref', async () => {
      const platform = new SandboxPlatform(fast);
      const { events, connection } = await linked(platform);
      const message = platform.inject('I1', {
        from: CONTACT,
        pushName: null,
        text: null,
        media: { kind: 'document', size: 1234 },
        platformMessageId: 'X1',
        timestamp: '2026-01-01T00:00:00.000Z',
      });
      const media = { mimetype: 'application/pdf', filename: 'sandbox.pdf', size: 1234 };
      expect(events.at(-1)).toEqual({
        type: 'inbound',
        message: { platformMessageId: 'X1', from: CONTACT, pushName: null, text: null, media, timestamp: '2026-01-01T00:00:00.000Z', ref: message.ref },
      });
      const file = await platform.downloadMedia(message.ref, 10_000);
      expect(file).toMatchObject({ mimetype: 'application/pdf', filename: 'sandbox.pdf' });
      expect(file.data).toHaveLength(1234);
      expect(file.data.subarray(0, 8).toString()).toBe('%PDF-1.4');
      // The same file on every call (any replica makes it from the ref alone).
      expect((await new SandboxPlatform(fast).downloadMedia(message.ref, 10_000)).data).toEqual(file.data);
      await expect(platform.downloadMedia(message.ref, 1_000)).rejects.toMatchObject({ reason: 'too_large' });
      const text = platform.inject('I1', { from: CONTACT, pushName: null, text: 'no file', media: null });
      await expect(platform.downloadMedia(text.ref, 10_000)).rejects.toMatchObject({ reason: 'no_media' });
      await connection.close();
    });

    it('records the read receipts an instance sends, only while connected', async () => {
      const platform = new SandboxPlatform({ ...fast, now: () => new Date('2026-11-22T10:00:00.000Z') });
      const { connection } = await linked(platform);
      const message = platform.inject('I1', { from: CONTACT, pushName: null, text: 'read me', media: null });
      await connection.markRead(message.ref);
      expect(platform.readMarksOf('I1')).toEqual([{ platformMessageId: message.platformMessageId, from: CONTACT, at: '2026-11-22T10:00:00.000Z' }]);
      await expect(connection.markRead('{"not":"a ref"}')).rejects.toThrow('not a sandbox message reference');
      await connection.close();
      await expect(connection.markRead(message.ref)).rejects.toThrow('not connected');
      expect(platform.readMarksOf('I1')).toHaveLength(1);
    });

    it('refuses to inject when the instance is not connected, or from a sender that is not digits', async () => {
      const platform = new SandboxPlatform(fast);
      const inbound = { from: CONTACT, pushName: null, text: 'x', media: null };
      expect(() => platform.inject('I1', inbound)).toThrow('not connected');
      const { events, connection } = await open(platform);
      expect(() => platform.inject('I1', inbound)).toThrow('not connected');
      await platform.scan('I1', NUMBER);
      expect(() => platform.inject('I1', { ...inbound, from: 'bob' })).toThrow(/digits/);
      expect(types(events)).toEqual(['qr', 'connected']);
      await connection.close();
      expect(() => platform.inject('I1', inbound)).toThrow('not connected');
    });
  });

  describe('connection loss and logout', () => {
    it('drops a connection: disconnected with the reason, then silence; the link stays', async () => {
      const platform = new SandboxPlatform(fast);
      const { events, connection } = await linked(platform);
      await connection.send({ messageId: 'm', to: CONTACT, text: 'x' });
      platform.disconnect('I1', 'connection_lost');
      expect(events.at(-1)).toEqual({ type: 'disconnected', reason: 'connection_lost' });
      expect(jest.getTimerCount()).toBe(0);
      jest.advanceTimersByTime(1_000);
      expect(events.at(-1)).toEqual({ type: 'disconnected', reason: 'connection_lost' });
      expect(await platform.linkedNumber('I1')).toBe(NUMBER);
      expect(() => platform.disconnect('I1', 'again')).toThrow('no open sandbox connection');
      await connection.close();
    });

    it('reports receipts still due at a drop on the next connection, after connected', async () => {
      const platform = new SandboxPlatform(fast);
      const first = await linked(platform);
      await first.connection.send({ messageId: 'm', to: CONTACT, text: 'x' });
      jest.advanceTimersByTime(5);
      platform.disconnect('I1', 'connection_lost');
      expect(receipts(first.events)).toEqual(['m:sent']);
      jest.advanceTimersByTime(100);
      const second = await open(platform);
      jest.advanceTimersByTime(0);
      expect(types(second.events)).toEqual(['connected']);
      jest.advanceTimersByTime(1);
      expect(types(second.events)).toEqual(['connected', 'receipt', 'receipt']);
      expect(receipts(second.events)).toEqual(['m:delivered', 'm:read']);
      await second.connection.close();
    });

    it('logs out from the phone: logged_out (logged_out_on_phone), the link is forgotten, the next connection shows a QR code', async () => {
      const platform = new SandboxPlatform(fast);
      const { events, connection } = await linked(platform);
      await connection.send({ messageId: 'm', to: CONTACT, text: 'x' });
      await platform.logoutFromPhone('I1');
      expect(events.at(-1)).toEqual({ type: 'logged_out', reason: 'logged_out_on_phone' });
      expect(await platform.linkedNumber('I1')).toBeNull();
      expect(jest.getTimerCount()).toBe(0);
      await expect(connection.send({ messageId: 'n', to: CONTACT, text: 'x' })).rejects.toThrow('not connected');
      await expect(platform.logoutFromPhone('I1')).rejects.toThrow('not linked');
      const fresh = await open(platform);
      jest.advanceTimersByTime(15);
      expect(types(fresh.events)).toEqual(['qr']);
      await fresh.connection.close();
    });

    it('forgets the link when the phone logs out while the instance is offline', async () => {
      const platform = new SandboxPlatform(fast);
      const { connection } = await linked(platform);
      await connection.close();
      await platform.logoutFromPhone('I1');
      const next = await open(platform);
      expect(types(next.events)).toEqual(['qr']);
      await next.connection.close();
    });

    it('logs out from the instance: silent, the link and the receipts due are forgotten, even after close', async () => {
      const platform = new SandboxPlatform(fast);
      const first = await linked(platform);
      await first.connection.send({ messageId: 'm', to: CONTACT, text: 'x' });
      await first.connection.logout();
      expect(types(first.events)).toEqual(['qr', 'connected']);
      expect(await platform.linkedNumber('I1')).toBeNull();
      expect(jest.getTimerCount()).toBe(0);
      await expect(first.connection.send({ messageId: 'n', to: CONTACT, text: 'x' })).rejects.toThrow('not connected');

      const second = await open(platform);
      await platform.scan('I1', NUMBER);
      jest.advanceTimersByTime(100);
      expect(receipts(second.events)).toEqual([]);
      await second.connection.close();
      await second.connection.logout();
      expect(await platform.linkedNumber('I1')).toBeNull();
      expect(types(second.events)).toEqual(['qr', 'connected']);
    });

    it('logs out a newer connection of the same device when an older one logs out', async () => {
      const platform = new SandboxPlatform(fast);
      const first = await linked(platform);
      const second = await open(platform);
      jest.advanceTimersByTime(0);
      await first.connection.logout();
      expect(second.events).toEqual([
        { type: 'connected', number: NUMBER },
        { type: 'logged_out', reason: 'logged_out' },
      ]);
    });
  });

  describe('one connection per instance', () => {
    it('lets a new connection replace the open one: the old reports disconnected (replaced) and falls silent', async () => {
      const platform = new SandboxPlatform(fast);
      const first = await open(platform);
      const second = await open(platform);
      expect(first.events.at(-1)).toEqual({ type: 'disconnected', reason: 'replaced' });
      expect(platform.currentQr('I1')).toBe(qrs(second.events)[0]);
      await platform.scan('I1', NUMBER);
      expect(second.events.at(-1)).toEqual({ type: 'connected', number: NUMBER });
      await expect(first.connection.send({ messageId: 'm', to: CONTACT, text: 'x' })).rejects.toThrow('not connected');
      await second.connection.send({ messageId: 'm', to: CONTACT, text: 'x' });
      jest.advanceTimersByTime(1_000);
      expect(types(first.events)).toEqual(['qr', 'disconnected']);
      expect(receipts(second.events)).toEqual(['m:sent', 'm:delivered', 'm:read']);
      await first.connection.close();
      expect(await platform.linkedNumber('I1')).toBe(NUMBER);
      await second.connection.close();
    });

    it('moves the receipts due of a linked instance to the replacing connection', async () => {
      const platform = new SandboxPlatform(fast);
      const first = await linked(platform);
      await first.connection.send({ messageId: 'm', to: CONTACT, text: 'x' });
      const second = await open(platform);
      jest.advanceTimersByTime(100);
      expect(receipts(first.events)).toEqual([]);
      expect(types(second.events)).toEqual(['connected', 'receipt', 'receipt', 'receipt']);
      await second.connection.close();
    });
  });

  describe('close', () => {
    it('emits nothing after close: no QR codes, no receipts, and no timer is left', async () => {
      const platform = new SandboxPlatform(fast);
      const waiting = await open(platform);
      await waiting.connection.close();
      expect(jest.getTimerCount()).toBe(0);
      expect(platform.currentQr('I1')).toBeNull();

      const online = await open(platform, 'I2');
      await platform.scan('I2', NUMBER);
      await online.connection.send({ messageId: 'm', to: CONTACT, text: 'x' });
      await online.connection.close();
      await online.connection.close();
      expect(jest.getTimerCount()).toBe(0);
      jest.advanceTimersByTime(1_000);
      expect(types(waiting.events)).toEqual(['qr']);
      expect(types(online.events)).toEqual(['qr', 'connected']);
      expect(await platform.linkedNumber('I2')).toBe(NUMBER);
    });

    it('stays silent when closed from inside its own event handler', async () => {
      const platform = new SandboxPlatform({ ...fast, deliveredDelayMs: 5, readDelayMs: 5 });
      const events: ConnectionEvent[] = [];
      const connection: Connection = await platform.connect('I1', (e) => {
        events.push(e);
        if (e.type === 'receipt') void connection.close();
      });
      await platform.scan('I1', NUMBER);
      await connection.send({ messageId: 'm', to: CONTACT, text: 'x' });
      jest.advanceTimersByTime(100);
      expect(receipts(events)).toEqual(['m:sent']);
      expect(jest.getTimerCount()).toBe(0);
    });
  });

  it('refuses options that cannot work', () => {
    expect(() => new SandboxPlatform({ qrCount: 0 })).toThrow(RangeError);
    expect(() => new SandboxPlatform({ qrIntervalMs: 0 })).toThrow(RangeError);
    expect(() => new SandboxPlatform({ readDelayMs: -1 })).toThrow(RangeError);
    expect(() => new SandboxPlatform({ sentDelayMs: Number.NaN })).toThrow(RangeError);
    expect(new SandboxPlatform().name).toBe('sandbox');
  });
});

describe('sandbox platform (real timers)', () => {
  const until = async (check: () => boolean, ms = 2_000): Promise<void> => {
    const deadline = Date.now() + ms;
    while (!check()) {
      if (Date.now() > deadline) throw new Error('condition not met in time');
      await new Promise((resolve) => setTimeout(resolve, 2));
    }
  };

  it('links, sends and receives with real timers, then lets the process exit', async () => {
    const platform = new SandboxPlatform(fast);
    const { events, connection } = await open(platform);
    await until(() => qrs(events).length === 2);
    await platform.scan('I1', NUMBER);
    await connection.send({ messageId: 'm', to: CONTACT, text: 'x' });
    await connection.send({ messageId: 'n', to: '000111', text: 'x' });
    await until(() => receipts(events).length === 4);
    expect(receipts(events).filter((r) => r.startsWith('m:'))).toEqual(['m:sent', 'm:delivered', 'm:read']);
    expect(receipts(events).filter((r) => r.startsWith('n:'))).toEqual(['n:failed:recipient_not_on_platform']);
    platform.inject('I1', { from: CONTACT, pushName: null, text: 'hi', media: null });
    expect(events.at(-1)?.type).toBe('inbound');
    await connection.close();
    const again = await open(platform);
    await until(() => again.events.length === 1);
    expect(again.events).toEqual([{ type: 'connected', number: NUMBER }]);
    // Left open on purpose: its timers are unref'd, so jest exits without an open-handle warning.
    await again.connection.send({ messageId: 'late', to: CONTACT, text: 'x' });
  });
});
