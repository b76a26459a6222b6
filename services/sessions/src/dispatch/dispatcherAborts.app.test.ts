import { instanceEvent, instanceIdFor, instanceStream, messageEvent, messageStream, type MessageAccepted } from '@wagw/lib';
import { dispatchRig, type DispatchRig } from '../../../../test/harness/dispatchRig';
import { eventually, sleep } from '../../../../test/harness/wait';
import type { MediaPayload } from '../connector/port';
import { MediaError, type MediaFetcher } from '../media/mediaFetcher';

// What ends an instance's pending sends (a reset, a logout, an erasure) stops the dispatch work already under way for
// them: a media fetch that hangs is aborted, so the waiting sends fail with their reason at once, not when the fetch
// times out, and the sends of a new link do not wait behind it. In-memory store, sandbox platform, a media host that
// does not answer until the media time-out (here FETCH_TIMEOUT_MS, as MEDIA_TIMEOUT_MS in production).

const NUMBER = '4915112345678';
const NEW_NUMBER = '4915100000000';
const TO = '4915199999999';
const FETCH_TIMEOUT_MS = 3_000;
/** What "at once" means here: well under the media time-out. */
const PROMPTLY_MS = 1_000;

describe('Dispatcher: what ends pending sends aborts their dispatch (application, in-memory store, sandbox platform)', () => {
  let rig: DispatchRig;
  let keys: DispatchRig['keys'];
  let store: DispatchRig['store'];
  let registry: DispatchRig['registry'];
  let platform: DispatchRig['platform'];
  let dispatcher: DispatchRig['dispatcher'];
  let open: DispatchRig['open'];
  let append: DispatchRig['append'];
  let n = 0;
  let id = '';
  /** Media fetches begun, and how each ended. */
  let fetches: Array<'hanging' | 'aborted' | 'timed_out' | 'fetched'> = [];
  /** Whether the media host answers (else it hangs until the time-out or an abort). */
  let answers = false;

  /** The media host: hangs until the fetch's signal aborts it, or until the time-out, like the real fetcher. */
  const media: MediaFetcher = {
    fetch: (_url: string, _filename: string | null, _caption: string | null, signal?: AbortSignal): Promise<MediaPayload> => {
      const index = fetches.push('hanging') - 1;
      if (answers) {
        fetches[index] = 'fetched';
        return Promise.resolve({ data: Buffer.from('x'), mimetype: 'image/png', filename: 'a.png' });
      }
      return new Promise((_resolve, reject) => {
        const timer = setTimeout(() => {
          fetches[index] = 'timed_out';
          reject(new MediaError(`media_timeout: no answer within ${FETCH_TIMEOUT_MS} ms`, true));
        }, FETCH_TIMEOUT_MS);
        signal?.addEventListener('abort', () => {
          clearTimeout(timer);
          fetches[index] = 'aborted';
          reject(new MediaError('media_cancelled: the send can no longer go out'));
        });
      });
    },
    close: () => Promise.resolve(),
  };

  beforeEach(() => {
    rig = dispatchRig({ media, dispatch: { pacingMs: 0, ttlMs: 60_000, retryMs: 50, retryForMs: 10_000 } });
    ({ keys, store, registry, platform, dispatcher, open, append } = rig);
    fetches = [];
    answers = false;
    id = instanceIdFor('acme', `aborts-${++n}`);
  });
  afterEach(() => rig.stop());

  const now = () => new Date().toISOString();
  const link = async (number: string): Promise<void> => {
    const connection = await platform.connect(id, () => undefined);
    await platform.scan(id, number);
    await append(instanceStream(id), instanceEvent('InstanceLinked', now(), { number }), instanceEvent('InstanceConnected', now(), {}));
    await registry.reach(id, 2_000);
    open.set(id, connection);
  };
  const accept = (messageId: string, content: Pick<MessageAccepted['data'], 'type' | 'text' | 'media_url'>) =>
    store.append(messageStream(id, messageId), [messageEvent('MessageAccepted', now(), { message_id: messageId, to: TO, filename: null, ...content })], {
      expectedVersion: 0,
      commandId: `accept-${messageId}`,
    });
  const acceptMedia = (messageId: string) => accept(messageId, { type: 'media', text: null, media_url: 'https://example.com/slow.png' });
  const acceptText = (messageId: string, text: string) => accept(messageId, { type: 'text', text, media_url: null });
  const failures = async (messageId: string) =>
    (await store.readStream(messageStream(id, messageId))).flatMap((c) => c.events.filter((e) => e.type === 'MessageFailed').map((e) => e.data.reason));
  /** Each message's failure reasons once every one has one, or at `withinMs`. */
  const failuresOf = (ids: string[], withinMs: number) =>
    eventually(
      () => Promise.all(ids.map(failures)),
      (all) => all.every((f) => f.length > 0),
      withinMs,
      20,
    );
  /** A media send hanging on its fetch, a text queued behind it, on a linked, connected instance. */
  const givenAFetchHanging = async (): Promise<void> => {
    await append(instanceStream(id), instanceEvent('InstanceCreated', now(), { instance_id: id, account: 'acme' }));
    await link(NUMBER);
    await acceptMedia('m1');
    await acceptText('m2', 'behind the media');
    dispatcher.start();
    await eventually(
      async () => fetches,
      (f) => f.length === 1,
      2_000,
    );
    await sleep(100);
    expect({ fetches, failed: await Promise.all(['m1', 'm2'].map(failures)) }).toEqual({ fetches: ['hanging'], failed: [[], []] });
  };

  it('fails the sends of a reset instance at once, aborting their media fetch, and a new link sends without waiting for it', async () => {
    await givenAFetchHanging();
    const resetAt = Date.now();
    // reset_instance: the event, then the replica holding the instance logs its connection out and wipes the link.
    await append(instanceStream(id), instanceEvent('InstanceReset', now(), {}));
    const old = open.get(id)!;
    open.delete(id);
    await old.logout();
    expect(await failuresOf(['m1', 'm2'], PROMPTLY_MS)).toEqual([['instance_reset'], ['instance_reset']]);
    expect(Date.now() - resetAt).toBeLessThan(PROMPTLY_MS);
    expect(fetches).toEqual(['aborted']);

    // get_qrcode and a scan link the instance again; a send accepted now goes out at once, and only it.
    await link(NEW_NUMBER);
    const acceptedAt = Date.now();
    await acceptText('m3', 'over the new link');
    const sent = await eventually(
      async () => platform.sent(id),
      (s) => s.length > 0,
      PROMPTLY_MS,
      20,
    );
    expect(Date.now() - acceptedAt).toBeLessThan(PROMPTLY_MS);
    expect(sent.map((m) => m.messageId)).toEqual(['m3']);
    await sleep(200);
    expect(platform.sent(id).map((m) => m.messageId)).toEqual(['m3']);
  });

  it('fails the sends at once with the reason when the phone logs the device out during the fetch', async () => {
    await givenAFetchHanging();
    await append(instanceStream(id), instanceEvent('InstanceLoggedOut', now(), { reason: 'logged_out_on_phone' }));
    open.delete(id);
    expect(await failuresOf(['m1', 'm2'], PROMPTLY_MS)).toEqual([['instance_logged_out_on_phone'], ['instance_logged_out_on_phone']]);
    expect(fetches).toEqual(['aborted']);
    expect(platform.sent(id)).toEqual([]);
  });

  it('fails the sends at once as content_erased when the instance is erased during the fetch', async () => {
    await givenAFetchHanging();
    await keys.destroy(id);
    await append(instanceStream(id), instanceEvent('InstanceDataErased', now(), {}));
    expect(await failuresOf(['m1', 'm2'], PROMPTLY_MS)).toEqual([['content_erased'], ['content_erased']]);
    expect(fetches).toEqual(['aborted']);
    expect(platform.sent(id)).toEqual([]);
  });

  it('does not abort the fetch on a disconnection (a reconnect, not a reset): the send is fetched again and goes out once', async () => {
    await givenAFetchHanging();
    const connection = open.get(id)!;
    open.delete(id);
    await append(instanceStream(id), instanceEvent('InstanceDisconnected', now(), { reason: 'connection_lost', reconnecting: true }));
    await sleep(300);
    expect(fetches).toEqual(['hanging']);
    answers = true;
    open.set(id, connection);
    const sent = await eventually(
      async () => platform.sent(id),
      (s) => s.length === 2,
      FETCH_TIMEOUT_MS + 3_000,
    );
    expect(sent.map((m) => m.messageId)).toEqual(['m1', 'm2']);
    expect(fetches).toEqual(['timed_out', 'fetched']);
    expect(await Promise.all(['m1', 'm2'].map(failures))).toEqual([[], []]);
  }, 15_000);
});
