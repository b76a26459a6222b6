import type { WaEmulator } from '../emulator/types';
import { linkOverEmulator, startBaileysStack, type BaileysStack } from '../harness/baileysStack';
import type { TestStack } from '../harness/stack';
import { eventually, sleep } from '../harness/wait';

type HistoryEvent = { type: string; stream: string; data: Record<string, unknown> };

/**
 * A restricted WhatsApp account with the real Baileys connector against the emulator, over HTTP: the 463 nack
 * fails the send as account_restricted, WhatsApp's timelock names (or not) the end, status shows it, and the
 * instance's later sends wait, reaching the phone once the restriction is lifted or over.
 */
describe('restrictions over HTTP with the Baileys connector', () => {
  let baileys: BaileysStack;
  let emulator: WaEmulator;
  let stack: TestStack;

  beforeAll(async () => {
    baileys = await startBaileysStack({});
    ({ emulator, stack } = baileys);
  }, 60_000);

  afterAll(() => baileys.close());

  const history = async (id: string): Promise<HistoryEvent[]> => (await stack.call(`/v1/history?instance_id=${id}&limit=1000`)).body.events as HistoryEvent[];
  const eventsOf = async (id: string, messageId: string) => (await history(id)).filter((e) => e.stream.endsWith(messageId)).map((e) => e.type);
  const status = async (id: string) => (await stack.call(`/v1/status?instance_id=${id}`)).body;
  const send = async (id: string, text: string): Promise<string> => {
    const r = await stack.call(`/v1/send?instance_id=${id}&number=4915199999999&type=text&message=${encodeURIComponent(text)}`);
    expect(r.status).toBe(200);
    return r.body.message_id as string;
  };

  const linkedInstance = (number: string): Promise<string> => linkOverEmulator(baileys, number);

  it('fails the send WhatsApp refuses with 463, shows the restriction, holds the next send and sends it once lifted', async () => {
    const id = await linkedInstance('4915100000401');
    emulator.restrict('4915100000401');
    const refused = await send(id, 'refused');
    const failed = await eventually(
      () => history(id),
      (h) => h.some((e) => e.type === 'MessageFailed'),
    );
    expect(failed.find((e) => e.type === 'MessageFailed')?.data).toMatchObject({ message_id: refused, reason: 'account_restricted' });
    expect(emulator.refusals().map((r) => [r.fromNumber, r.error])).toEqual([['4915100000401', '463']]);
    const shown = await eventually(
      () => status(id),
      (s) => s.restricted !== null,
    );
    expect(shown.restricted).toEqual({ since: expect.any(String), until: null });

    const held = await send(id, 'held while restricted');
    await sleep(1_500);
    expect(await eventsOf(id, held)).toEqual(['MessageAccepted']);
    expect(emulator.refusals()).toHaveLength(1);

    emulator.unrestrict('4915100000401');
    const received = await emulator.waitForReceived((m) => m.fromNumber === '4915100000401');
    expect(received.text).toBe('held while restricted');
    await eventually(
      () => status(id),
      (s) => s.restricted === null,
    );
    expect((await history(id)).map((e) => e.type)).toEqual(expect.arrayContaining(['InstanceRestricted', 'InstanceRestrictionLifted']));
  });

  it('learns the end WhatsApp names, holds sends until then, and sends them after', async () => {
    const id = await linkedInstance('4915100000402');
    const untilMs = Date.now() + 4_000;
    emulator.restrict('4915100000402', { untilMs });
    const shown = await eventually(
      () => status(id),
      (s) => s.restricted !== null,
    );
    // WhatsApp speaks in seconds.
    expect((shown.restricted as { until: string }).until).toBe(new Date(Math.floor(untilMs / 1000) * 1000).toISOString());
    const held = await send(id, 'after the end');
    await sleep(1_000);
    expect(await eventsOf(id, held)).toEqual(['MessageAccepted']);
    const received = await emulator.waitForReceived((m) => m.fromNumber === '4915100000402', 15_000);
    expect(received.text).toBe('after the end');
    expect(received.at).toBeGreaterThanOrEqual(Math.floor(untilMs / 1000) * 1000);
    expect(emulator.refusals().filter((r) => r.fromNumber === '4915100000402')).toEqual([]);
  });

  it('sends the held messages once WhatsApp lifts a restriction the connection heard of only from the log (heard before a reconnect)', async () => {
    const id = await linkedInstance('4915100000403');
    emulator.restrict('4915100000403');
    await send(id, 'refused');
    await eventually(
      () => status(id),
      (s) => s.restricted !== null,
    );
    const held = await send(id, 'held while restricted');
    // A new connection (as after a network blip or a failover) has heard nothing of the restriction: the log holds sends.
    expect((await stack.call(`/v1/reconnect?instance_id=${id}`)).status).toBe(200);
    await eventually(
      () => status(id),
      (s) => s.state === 'connected',
    );
    await sleep(500);
    expect(await eventsOf(id, held)).toEqual(['MessageAccepted']);

    emulator.unrestrict('4915100000403');
    const received = await emulator.waitForReceived((m) => m.fromNumber === '4915100000403');
    expect(received.text).toBe('held while restricted');
    const lifted = await eventually(
      () => status(id),
      (s) => s.restricted === null,
    );
    expect(lifted.restricted).toBeNull();
  });
});
