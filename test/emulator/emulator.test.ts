import { testLogger } from '../harness/logger';
import { BaileysConnector } from '../../services/sessions/src/connector/baileys/baileysConnector';
import type { BaileysOptions } from '../../services/sessions/src/connector/baileys/options';
import { AuthStateStore } from '../../services/sessions/src/connector/baileys/kvAuthState';
import { SentMessageStore } from '../../services/sessions/src/connector/baileys/sentStore';
import { MemoryTextBucket } from '../../services/sessions/src/connector/baileys/textBucket';
import type { Connection, ConnectionEvent } from '../../services/sessions/src/connector/port';
import { startWaEmulator } from './emulator';
import type { WaEmulator } from './types';

// A Baileys 7 first login (812 pre-keys) takes seconds on a busy 2-core machine.
const waitFor = async <T>(read: () => T | undefined, what: string, timeoutMs = 20_000): Promise<T> => {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = read();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
};

/** One instance on the real Baileys connector, with its auth state in memory (kept across connections). */
class Client {
  readonly events: ConnectionEvent[] = [];
  private readonly connector: BaileysConnector;
  connection: Connection | undefined;

  constructor(options: BaileysOptions) {
    const logger = testLogger('emulator-test');
    this.connector = new BaileysConnector({
      auth: new AuthStateStore(new MemoryTextBucket(), logger),
      sent: new SentMessageStore(new MemoryTextBucket()),
      logger,
      options,
    });
  }

  download(ref: string): Promise<{ data: Buffer; mimetype: string; filename: string | null }> {
    return this.connector.downloadMedia(ref, 1 << 20);
  }

  async connect(): Promise<void> {
    this.connection = await this.connector.connect('EMU', (event) => this.events.push(event));
  }

  next<K extends ConnectionEvent['type']>(type: K, after = 0): Promise<Extract<ConnectionEvent, { type: K }>> {
    return waitFor(() => this.events.slice(after).find((event): event is Extract<ConnectionEvent, { type: K }> => event.type === type), `a ${type} event`);
  }

  async link(emulator: WaEmulator, number: string): Promise<void> {
    await this.connect();
    await emulator.scan((await this.next('qr')).qr, number);
    await this.next('connected');
  }
}

// Each test links one to three companions.
jest.setTimeout(90_000);

describe('the WhatsApp Web emulator, driven by the real Baileys connector', () => {
  let emulator: WaEmulator;
  const clients: Client[] = [];
  const client = (options: Partial<BaileysOptions> = {}): Client => {
    const created = new Client({ webSocketUrl: emulator.url, uploadHosts: [emulator.mediaHost], mediaTlsCa: emulator.mediaCaPem, ...options });
    clients.push(created);
    return created;
  };

  beforeAll(async () => {
    emulator = await startWaEmulator({ receipts: { deliveryMs: 10, readMs: null } });
  });
  afterAll(async () => {
    for (const c of clients) await c.connection?.close();
    await emulator.stop();
  });

  it('pairs a companion on a scan and lists it as a connected device', async () => {
    const phone = client();
    await phone.link(emulator, '15550001111');
    expect(phone.events.map((e) => e.type)).toEqual(['qr', 'connected']);
    expect(emulator.devices()).toEqual([expect.objectContaining({ number: '15550001111', deviceId: 1, connected: true })]);
  });

  it('sends receipts only as configured, and the ones a test sends by hand', async () => {
    const phone = client();
    await phone.link(emulator, '15550002222');
    await phone.connection?.send({ messageId: 'm1', to: '15550009999', text: 'ping' });
    expect((await emulator.waitForReceived((m) => m.id !== '' && m.fromNumber === '15550002222')).text).toBe('ping');
    await waitFor(() => phone.events.find((e) => e.type === 'receipt' && e.status === 'delivered'), 'a delivery receipt');
    await new Promise((resolve) => setTimeout(resolve, 200));
    const id = emulator.received().find((m) => m.fromNumber === '15550002222')?.id ?? '';
    expect(phone.events.filter((e) => e.type === 'receipt').map((e) => e.type === 'receipt' && e.status)).toEqual(['sent', 'delivered']);
    emulator.sendReceipt('15550002222', '15550009999', id, 'read');
    await waitFor(() => phone.events.find((e) => e.type === 'receipt' && e.status === 'read'), 'a read receipt');
  });

  it('keeps messages for a device that is away and delivers them at its next login', async () => {
    const phone = client();
    await phone.link(emulator, '15550003333');
    await phone.connection?.close();
    await waitFor(() => (emulator.devices().find((d) => d.number === '15550003333')?.connected === false ? true : undefined), 'the device offline');
    await emulator.sendText('15550003333', '15550004444', 'Eve', 'while you were away');
    const seen = phone.events.length;
    await phone.connect();
    const inbound = await phone.next('inbound', seen);
    expect(inbound.message).toMatchObject({ from: '15550004444', pushName: 'Eve', text: 'while you were away' });
    await waitFor(() => emulator.clientReceipts().find((r) => r.ids.includes(inbound.message.platformMessageId)), 'the companion acknowledging the message');
  });

  it('refuses a client older than the minimum version with 405, and ends a removed device with 401', async () => {
    const strict = await startWaEmulator({ minClientVersion: [9, 0, 0] });
    try {
      const old = new Client({ webSocketUrl: strict.url });
      await old.connect();
      expect(await old.next('failed')).toEqual({ type: 'failed', reason: 'client_outdated' });
    } finally {
      await strict.stop();
    }
    const phone = client();
    await phone.link(emulator, '15550005555');
    await emulator.kick('15550005555', 'device-removed');
    expect(await phone.next('logged_out')).toEqual({ type: 'logged_out', reason: 'logged_out_on_phone' });
    expect(emulator.devices().some((d) => d.number === '15550005555')).toBe(false);
  });

  it("refuses a restricted number's sends with a 463 nack, tells the timelock and its lifting", async () => {
    const phone = client();
    await phone.link(emulator, '15550006666');
    const untilMs = Date.now() + 60_000;
    emulator.restrict('15550006666', { untilMs });
    const announced = await phone.next('restricted');
    expect(announced.until).toBe(new Date(Math.floor(untilMs / 1000) * 1000).toISOString());
    await phone.connection?.send({ messageId: 'r1', to: '15550009999', text: 'refused' });
    await waitFor(() => phone.events.find((e) => e.type === 'receipt' && e.messageId === 'r1' && e.status === 'failed'), 'the refusal');
    expect(phone.events.find((e) => e.type === 'receipt' && e.messageId === 'r1')).toMatchObject({ reason: 'account_restricted' });
    expect(emulator.refusals()).toEqual([expect.objectContaining({ fromNumber: '15550006666', error: '463' })]);
    expect(emulator.received().some((m) => m.fromNumber === '15550006666')).toBe(false);
    const seen = phone.events.length;
    emulator.unrestrict('15550006666');
    await phone.next('unrestricted', seen);
  });

  it('sends media the client downloads from the media host and decrypts, and records its read receipt', async () => {
    const phone = client();
    await phone.link(emulator, '15550007777');
    const data = Buffer.from('%PDF-1.4 emulated file');
    const id = await emulator.sendMedia('15550007777', '15550008888', 'Max', { kind: 'document', data, mimetype: 'application/pdf', fileName: 'f.pdf' });
    const inbound = await phone.next('inbound');
    expect(inbound.message).toMatchObject({ platformMessageId: id, media: { mimetype: 'application/pdf', filename: 'f.pdf', size: data.length } });
    expect(await phone.download(inbound.message.ref)).toEqual({ data, mimetype: 'application/pdf', filename: 'f.pdf' });
    await phone.connection?.markRead(inbound.message.ref);
    await waitFor(() => emulator.clientReceipts().find((r) => r.type === 'read' && r.ids.includes(id)), 'the read receipt');
  });
});
