import { instanceEvent, instanceIdFor, instanceStream, messageEvent, messageStream, type MessageAccepted } from '@wagw/lib';
import { dispatchRig, type DispatchRig } from '../../../../test/harness/dispatchRig';
import { eventually } from '../../../../test/harness/wait';
import type { Connection } from '../connector/port';
import { createMediaFetcher } from '../media/mediaFetcher';

// Application tests of sending: the real dispatcher (on its durable subscription), registry and sandbox platform on
// an in-memory store whose message content is sealed, as in production. Given the instance's events and an accepted message, when the dispatcher works it, then what
// the platform took and what the dispatcher stored.

const NUMBER = '4915112345678';
const TO = '4915199999999';
const PACING_MS = 150;

describe('Dispatcher (application, in-memory store, sandbox platform)', () => {
  const media = createMediaFetcher({ maxBytes: 1024, timeoutMs: 1_000, allowPrivateNetworks: false });
  let rig: DispatchRig;
  let keys: DispatchRig['keys'];
  let store: DispatchRig['store'];
  let registry: DispatchRig['registry'];
  let platform: DispatchRig['platform'];
  let dispatcher: DispatchRig['dispatcher'];
  let open: DispatchRig['open'];
  let paused: DispatchRig['paused'];
  let append: DispatchRig['append'];
  let n = 0;
  let id = '';

  afterAll(() => media.close());
  beforeEach(() => {
    rig = dispatchRig({ media, dispatch: { pacingMs: PACING_MS, ttlMs: 60_000, retryMs: 50, retryForMs: 500 } });
    ({ keys, store, registry, platform, dispatcher, open, paused, append } = rig);
    id = instanceIdFor('acme', `dispatch-${++n}`);
  });
  afterEach(() => rig.stop());

  const now = () => new Date().toISOString();
  const givenLinked = async (): Promise<void> => {
    await append(instanceStream(id), instanceEvent('InstanceCreated', now(), { instance_id: id, account: 'acme' }));
    await append(instanceStream(id), instanceEvent('InstanceLinked', now(), { number: NUMBER }), instanceEvent('InstanceConnected', now(), {}));
  };
  /** The instance's connection comes online on the sandbox (a scan), as the session manager would hold it. */
  const goOnline = async (): Promise<void> => {
    const connection = await platform.connect(id, () => undefined);
    await platform.scan(id, NUMBER);
    open.set(id, connection);
  };
  const accept = (messageId: string, text: string, occurredAt = now()) =>
    store.append(
      messageStream(id, messageId),
      [messageEvent('MessageAccepted', occurredAt, { message_id: messageId, to: TO, type: 'text', text, media_url: null, filename: null })],
      {
        expectedVersion: 0,
        commandId: `accept-${messageId}`,
      },
    );
  const failures = async (messageId: string) =>
    (await store.readStream(messageStream(id, messageId))).flatMap((c) => c.events.filter((e) => e.type === 'MessageFailed').map((e) => e.data.reason));
  /** The message's failure reasons once it has one (within 5 s). */
  const failureOf = (messageId: string) =>
    eventually(
      () => failures(messageId),
      (f) => f.length === 1,
      5_000,
    );

  it('sends accepted messages of a connected instance in order, paced', async () => {
    await givenLinked();
    await goOnline();
    await accept('m1', 'first');
    await accept('m2', 'second');
    dispatcher.start();
    const sent = await eventually(
      async () => platform.sent(id),
      (s) => s.length === 2,
      5_000,
    );
    expect(sent.map((m) => [m.messageId, m.to, m.text])).toEqual([
      ['m1', TO, 'first'],
      ['m2', TO, 'second'],
    ]);
    expect(Date.parse(sent[1]!.acceptedAt) - Date.parse(sent[0]!.acceptedAt)).toBeGreaterThanOrEqual(PACING_MS - 10);
  });

  it('keeps a send queued while the instance is not connected, and sends it once it is', async () => {
    await givenLinked();
    await accept('m1', 'queued');
    dispatcher.start();
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(platform.sent(id)).toEqual([]);
    await goOnline();
    expect(
      (
        await eventually(
          async () => platform.sent(id),
          (s) => s.length === 1,
          5_000,
        )
      ).map((m) => m.text),
    ).toEqual(['queued']);
  });

  it('keeps sends queued while the account is restricted, in order, and sends them once it is not', async () => {
    await givenLinked();
    await goOnline();
    paused.add(id);
    await accept('m1', 'first');
    await accept('m2', 'second');
    dispatcher.start();
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(platform.sent(id)).toEqual([]);
    expect([await failures('m1'), await failures('m2')]).toEqual([[], []]);
    paused.delete(id);
    const sent = await eventually(
      async () => platform.sent(id),
      (s) => s.length === 2,
      5_000,
    );
    expect(sent.map((m) => m.text).sort()).toEqual(['first', 'second']);
  });

  it('holds a send back when the account is restricted during its pacing gap (a refusal of the send before it)', async () => {
    await givenLinked();
    await goOnline();
    await accept('m1', 'first');
    await accept('m2', 'second');
    dispatcher.start();
    await eventually(
      async () => platform.sent(id).length,
      (n) => n === 1,
      5_000,
    );
    paused.add(id); // m2 is in the lane, waiting out the pacing gap
    await new Promise((resolve) => setTimeout(resolve, PACING_MS * 2));
    expect(platform.sent(id).map((m) => m.text)).toEqual(['first']);
    paused.delete(id);
    await eventually(
      async () => platform.sent(id).length,
      (n) => n === 2,
      5_000,
    );
  });

  it('fails a send accepted before a reset, and sends nothing', async () => {
    await givenLinked();
    await accept('m1', 'before the reset');
    await append(instanceStream(id), instanceEvent('InstanceReset', now(), {}));
    await registry.reach(id, 2_000);
    dispatcher.start();
    expect(await failureOf('m1')).toEqual(['instance_reset']);
    expect(platform.sent(id)).toEqual([]);
  });

  it('fails a send at once, with the reason, once the phone logged the device out', async () => {
    await givenLinked();
    await append(instanceStream(id), instanceEvent('InstanceLoggedOut', now(), { reason: 'logged_out_on_phone' }));
    await accept('m1', 'after the logout');
    await registry.reach(id, 2_000);
    dispatcher.start();
    expect(await failureOf('m1')).toEqual(['instance_logged_out_on_phone']);
  });

  it('leaves the sends it cannot send to the replica deciding for the instance, which fails them', async () => {
    await givenLinked();
    await append(instanceStream(id), instanceEvent('InstanceLoggedOut', now(), { reason: 'logged_out_on_phone' }));
    await accept('m1', 'after the logout');
    await registry.reach(id, 2_000);
    let decides = false;
    dispatcher.decideFor(() => decides);
    dispatcher.start();
    await new Promise((resolve) => setTimeout(resolve, 300)); // six sweeps
    expect(await failures('m1')).toEqual([]);
    decides = true;
    expect(await failureOf('m1')).toEqual(['instance_logged_out_on_phone']);
  });

  it('fails a send as expired once its time to live passed', async () => {
    await givenLinked();
    await accept('m1', 'too old', new Date(Date.now() - 120_000).toISOString());
    await registry.reach(id, 2_000);
    dispatcher.start();
    expect(await failureOf('m1')).toEqual(['expired']);
  });

  it('sends what waited while the instance was offline first, then what came after it connected, in order', async () => {
    await givenLinked();
    await accept('m1', 'waited 1');
    await accept('m2', 'waited 2');
    dispatcher.start();
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(platform.sent(id)).toEqual([]);
    await goOnline();
    await accept('m3', 'after connecting');
    const sent = await eventually(
      async () => platform.sent(id),
      (s) => s.length === 3,
      5_000,
    );
    expect(sent.map((m) => m.messageId)).toEqual(['m1', 'm2', 'm3']);
  });

  it('fails a waiting send once the phone logs the device out, though no connection ever comes', async () => {
    await givenLinked();
    await accept('m1', 'waiting');
    dispatcher.start();
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(await failures('m1')).toEqual([]);
    await append(instanceStream(id), instanceEvent('InstanceLoggedOut', now(), { reason: 'logged_out_on_phone' }));
    expect(await failureOf('m1')).toEqual(['instance_logged_out_on_phone']);
    expect(platform.sent(id)).toEqual([]);
  });

  it('fails a send the platform keeps refusing as send_failed after retryForMs, and the sends behind it go on', async () => {
    await givenLinked();
    await goOnline();
    // The platform refuses this one text every time, with an error other than "not on the platform".
    const connection = open.get(id)!;
    const refusing: Connection = Object.assign(Object.create(connection) as Connection, {
      send: (message: Parameters<Connection['send']>[0]) =>
        message.text === 'refused every time' ? Promise.reject(new Error('platform error')) : connection.send(message),
    });
    open.set(id, refusing);
    await accept('m1', 'refused every time');
    await accept('m2', 'behind it');
    const started = Date.now();
    dispatcher.start();
    expect(await failureOf('m1')).toEqual(['send_failed']);
    // Tried for retryForMs (500 ms), one try per sweep, not given up on the first error.
    expect(Date.now() - started).toBeGreaterThanOrEqual(450);
    const sent = await eventually(
      async () => platform.sent(id),
      (list) => list.length === 1,
      5_000,
    );
    expect(sent.map((m) => m.text)).toEqual(['behind it']);
  });

  it('fails a reaction or a reply to a send that failed before them (WhatsApp never had it), and sends neither', async () => {
    await givenLinked();
    await goOnline();
    const connection = open.get(id)!;
    open.set(id, Object.assign(Object.create(connection) as Connection, { send: () => Promise.reject(new Error('platform error')) }));
    await accept('m1', 'never arrives');
    // Accepted while m1 still waited its turn (the accept found it queued, not failed).
    const refer = (messageId: string, data: Partial<MessageAccepted['data']>) =>
      store.append(
        messageStream(id, messageId),
        [messageEvent('MessageAccepted', now(), { message_id: messageId, to: TO, type: 'text', text: 'about m1', media_url: null, filename: null, ...data })],
        { expectedVersion: 0, commandId: `accept-${messageId}` },
      );
    await refer('m2', { type: 'reaction', text: null, reaction: { message_id: 'm1', emoji: '👍' } });
    await refer('m3', { quoted_message_id: 'm1' });
    dispatcher.start();
    expect(await failureOf('m1')).toEqual(['send_failed']);
    open.set(id, connection);
    expect([await failureOf('m2'), await failureOf('m3')]).toEqual([['referred_message_not_sent'], ['referred_message_not_sent']]);
    expect(platform.sent(id)).toEqual([]);
  });

  it('hands a send out again, same message id, when no receipt came for it (the connection dropped after the write, before the ack)', async () => {
    await givenLinked();
    await goOnline();
    dispatcher = rig.dispatcherWith({
      pacingMs: 0,
      ttlMs: 60_000,
      retryMs: 50,
      retryForMs: 500,
      confirmWithinMs: 300,
    });
    // The first hand-over is written to a socket that then drops: taken, never acknowledged, no receipt.
    const connection = open.get(id)!;
    let swallowed = 0;
    const dropping: Connection = Object.assign(Object.create(connection) as Connection, {
      send: (message: Parameters<Connection['send']>[0]) => (swallowed++ === 0 ? Promise.resolve() : connection.send(message)),
    });
    open.set(id, dropping);
    await accept('m1', 'taken before the drop');
    dispatcher.start();
    const sent = await eventually(
      async () => platform.sent(id),
      (list) => list.length === 1,
      5_000,
    );
    expect([sent[0]!.messageId, swallowed, await failures('m1')]).toEqual(['m1', 2, []]);
  });

  it('does not hand a send out again when its late receipt comes while it waits for its turn', async () => {
    await givenLinked();
    await goOnline();
    dispatcher = rig.dispatcherWith({
      pacingMs: 600,
      ttlMs: 60_000,
      retryMs: 50,
      retryForMs: 500,
      confirmWithinMs: 200,
    });
    // Taken, and its receipt late: it comes while the send, handed out again, waits for its pacing gap.
    const connection = open.get(id)!;
    let handed = 0;
    open.set(
      id,
      Object.assign(Object.create(connection) as Connection, {
        send: () => {
          handed += 1;
          return Promise.resolve();
        },
      }),
    );
    await accept('m1', 'taken, receipt late');
    dispatcher.start();
    await eventually(
      async () => handed,
      (n) => n === 1,
      5_000,
    );
    await new Promise((resolve) => setTimeout(resolve, 350));
    await store.append(messageStream(id, 'm1'), [messageEvent('MessageSent', now(), { message_id: 'm1', to: TO })], {
      expectedVersion: 'any',
      commandId: 'sent-m1',
    });
    await new Promise((resolve) => setTimeout(resolve, 800));
    expect(handed).toBe(1);
  });

  it('shows typing before each text for a time that grows with it, inside the pacing gap', async () => {
    const typing = { msPerChar: 10, minMs: 100, maxMs: 400 };
    await dispatcher.stop();
    dispatcher = rig.dispatcherWith({
      pacingMs: PACING_MS,
      ttlMs: 60_000,
      retryMs: 50,
      retryForMs: 500,
      typing,
    });
    await givenLinked();
    await goOnline();
    await accept('m1', 'hi');
    await accept('m2', 'x'.repeat(30));
    dispatcher.start();
    const sent = await eventually(
      async () => platform.sent(id),
      (s) => s.length === 2,
      5_000,
    );
    const presences = platform.typing(id);
    expect(presences.map((p) => [p.to, p.typing])).toEqual([
      [TO, true],
      [TO, false],
      [TO, true],
      [TO, false],
    ]);
    const at = presences.map((p) => p.at);
    // 'hi': the minimum, 100 ms; 30 characters: 300 ms, more than the pacing, so the gap between the sends is the typing.
    expect(at[1]! - at[0]!).toBeGreaterThanOrEqual(typing.minMs - 5);
    expect(at[3]! - at[2]!).toBeGreaterThanOrEqual(300 - 5);
    expect(Date.parse(sent[1]!.acceptedAt) - Date.parse(sent[0]!.acceptedAt)).toBeGreaterThanOrEqual(300 - 10);
  });

  it('fails a queued send cleanly as content_erased when the instance was erased before it went out; a send after it goes out', async () => {
    await givenLinked();
    await accept('m1', 'erased before it went out');
    dispatcher.start();
    await new Promise((resolve) => setTimeout(resolve, 200));
    await keys.destroy(id);
    await accept('m2', 'after the erasure');
    await goOnline();
    expect(await failureOf('m1')).toEqual(['content_erased']);
    const sent = await eventually(
      async () => platform.sent(id),
      (s) => s.length === 1,
      5_000,
    );
    expect(sent.map((m) => [m.messageId, m.text])).toEqual([['m2', 'after the erasure']]);
  });

  it('fails the sends waiting their turn in the lane as content_erased once the instance is erased: none goes out with its text', async () => {
    await givenLinked();
    await goOnline();
    dispatcher = rig.dispatcherWith({ pacingMs: 400, ttlMs: 60_000, retryMs: 50, retryForMs: 500 });
    for (const n of [1, 2, 3]) await accept(`m${n}`, `secret ${n}`);
    dispatcher.start();
    await eventually(
      async () => platform.sent(id),
      (s) => s.length === 1,
      5_000,
    );
    // Erased while m2 and m3 wait in the lane, opened already, for their pacing gap.
    await keys.destroy(id);
    await append(instanceStream(id), instanceEvent('InstanceDataErased', now(), {}));
    for (const n of [2, 3]) expect(await failureOf(`m${n}`)).toEqual(['content_erased']);
    expect(platform.sent(id).map((m) => m.text)).toEqual(['secret 1']);
  });
});
