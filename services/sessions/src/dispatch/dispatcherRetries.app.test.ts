import { instanceEvent, instanceIdFor, instanceStream, messageEvent, messageStream } from '@wagw/lib';
import { dispatchRig, type DispatchRig } from '../../../../test/harness/dispatchRig';
import type { Connection } from '../connector/port';
import { MediaError, type MediaFetcher } from '../media/mediaFetcher';

const NUMBER = '4915112345678';
const TO = '4915199999999';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

// The dispatcher's retries on the in-memory store, sandbox platform: media hosts that blip around a disconnection,
// what it keeps of failing sends, and a send whose receipt was lost (handed out again once, then confirmed).

describe('Dispatcher retries (application, in-memory store, sandbox platform)', () => {
  let rig: DispatchRig | null = null;
  let store: DispatchRig['store'];
  let ledger: DispatchRig['ledger'];
  let platform: DispatchRig['platform'];
  let dispatcher: DispatchRig['dispatcher'];
  let open: DispatchRig['open'];
  let append: DispatchRig['append'];
  let n = 0;
  let id = '';
  let fetches: Array<() => never | { data: Buffer; mimetype: string; filename: string }> = [];
  const media = {
    fetch: async () => {
      const next = fetches.shift();
      if (!next) return { data: Buffer.from('x'), mimetype: 'image/png', filename: 'a.png' };
      return next();
    },
    close: async () => undefined,
  } as unknown as MediaFetcher;

  const setUp = (ttlMs = 60_000) => {
    rig = dispatchRig({ media, dispatch: { pacingMs: 0, ttlMs, retryMs: 50, retryForMs: 500 } });
    ({ store, ledger, platform, dispatcher, open, append } = rig);
    fetches = [];
    id = instanceIdFor('acme', `review-${++n}`);
  };
  afterEach(async () => {
    await rig?.stop();
    rig = null;
  });
  const now = () => new Date().toISOString();
  const givenLinked = async () => {
    await append(instanceStream(id), instanceEvent('InstanceCreated', now(), { instance_id: id, account: 'acme' }));
    await append(instanceStream(id), instanceEvent('InstanceLinked', now(), { number: NUMBER }), instanceEvent('InstanceConnected', now(), {}));
  };
  const goOnline = async () => {
    const connection = await platform.connect(id, () => undefined);
    await platform.scan(id, NUMBER);
    open.set(id, connection);
  };
  const acceptMedia = (messageId: string, occurredAt = now()) =>
    store.append(
      messageStream(id, messageId),
      [
        messageEvent('MessageAccepted', occurredAt, {
          message_id: messageId,
          to: TO,
          type: 'media',
          text: null,
          media_url: 'https://example.com/a.png',
          filename: null,
        }),
      ],
      { expectedVersion: 0, commandId: `accept-${messageId}` },
    );
  const failures = async (messageId: string) =>
    (await store.readStream(messageStream(id, messageId))).flatMap((c) => c.events.filter((e) => e.type === 'MessageFailed').map((e) => e.data.reason));
  const blip = (): never => {
    throw new MediaError('media_unavailable: HTTP 503', true);
  };

  it('tries a media blip after a disconnection longer than retryForMs again, not failing the send at once', async () => {
    setUp();
    await givenLinked();
    await goOnline();
    // First try: the host blips, and the connection goes away at the same moment.
    const connection = open.get(id)!;
    fetches.push(() => {
      open.delete(id);
      return blip();
    });
    await acceptMedia('m1');
    dispatcher.start();
    await sleep(1_000); // offline for twice retryForMs: no try is made meanwhile
    expect(await failures('m1')).toEqual([]);
    open.set(id, connection); // back online
    fetches.push(blip); // one blip on the first try after reconnecting; the next try would succeed
    await sleep(1_500);
    expect({ failures: await failures('m1'), sent: platform.sent(id).length }).toEqual({ failures: [], sent: 1 });
  });

  it('forgets what it kept of a failing send once the sweeper failed it (expired) after media blips', async () => {
    setUp(1_500);
    await givenLinked();
    await goOnline();
    fetches.push(() => {
      open.delete(id);
      return blip();
    });
    await acceptMedia('m1');
    dispatcher.start();
    await sleep(2_500); // past the TTL: the sweeper fails it as expired
    expect(await failures('m1')).toEqual(['expired']);
    await sleep(200); // a sweep after the failure
    // What it kept to retry the send (since when, the latest try) goes with the send: nothing grows per send.
    const kept = dispatcher as unknown as { failing: Map<string, unknown> };
    expect(kept.failing.size).toBe(0);
  });

  it('hands a send whose receipt was lost out once more, and it is confirmed then (no endless re-sends)', async () => {
    setUp();
    dispatcher = rig!.dispatcherWith({
      pacingMs: 0,
      ttlMs: 60_000,
      retryMs: 50,
      retryForMs: 500,
      confirmWithinMs: 200,
    });
    await givenLinked();
    // The session manager's recording of receipts, except the first `sent`, lost (FactRecorder gave up after an outage).
    let lost = false;
    const connection = await platform.connect(id, (event) => {
      if (event.type !== 'receipt' || event.status !== 'sent') return;
      if (!lost) {
        lost = true;
        return;
      }
      void store.append(messageStream(id, event.messageId), [messageEvent('MessageSent', now(), { message_id: event.messageId, to: TO })], {
        expectedVersion: 'any',
        commandId: `receipt-${event.messageId}-sent`,
      });
    });
    await platform.scan(id, NUMBER);
    let handed = 0;
    open.set(
      id,
      Object.assign(Object.create(connection) as Connection, {
        send: (m: Parameters<Connection['send']>[0]) => {
          handed++;
          return connection.send(m);
        },
      }),
    );
    await store.append(
      messageStream(id, 'm1'),
      [messageEvent('MessageAccepted', now(), { message_id: 'm1', to: TO, type: 'text', text: 'hi', media_url: null, filename: null })],
      { expectedVersion: 0, commandId: 'accept-m1' },
    );
    dispatcher.start();
    await sleep(2_500);
    expect({ handed, stillQueued: ledger.queued(id) }).toEqual({ handed: 2, stillQueued: 0 });
  });
});
