import { InMemoryEventStore, instanceEvent, instanceIdFor, instanceStream, messageStream, newCommandId, type InstanceCreated, type NewEvent } from '@wagw/lib';
import { testLogger } from '../../../../test/harness/logger';
import { EndpointDirectory } from '../endpoints/endpointDirectory';
import type { WebhookEvent } from '../routing/webhookEvent';
import { LiveEvents, type LiveFeed, type LiveQuery } from './liveEvents';

// Application tests of the live feed on the in-memory store: which events a reader gets, from where, for whom.

const MINE = instanceIdFor('acme', 'c1');
const THEIRS = instanceIdFor('other', 'c2');
const AT = '2026-11-23T10:00:00.000Z';

describe('live events', () => {
  let store: InMemoryEventStore;
  let endpoints: EndpointDirectory;
  let live: LiveEvents;
  const feeds: LiveFeed[] = [];

  const append = (stream: string, ...events: NewEvent[]) => store.append(stream, events, { expectedVersion: 'any', commandId: newCommandId() });
  const received = (from: string, text: string): NewEvent => ({ type: 'MessageReceived', schemaVersion: 1, occurredAt: AT, data: { from, text } });
  const query = (q: Partial<LiveQuery>): LiveQuery => ({ account: 'acme', instanceId: '', types: [], lastEventId: '', ...q });

  /** The first `n` events of a feed (bounded: the test fails on a time-out rather than hanging). */
  const take = async (feed: LiveFeed, n: number): Promise<WebhookEvent[]> => {
    const got: WebhookEvent[] = [];
    for await (const event of feed) if (got.push(event) >= n) break;
    return got;
  };
  const open = async (q: Partial<LiveQuery>): Promise<LiveFeed> => {
    const feed = await live.open(query(q));
    feeds.push(feed);
    return feed;
  };

  beforeEach(async () => {
    store = new InMemoryEventStore();
    endpoints = new EndpointDirectory(store, testLogger('endpoints'));
    endpoints.start();
    live = new LiveEvents(store, endpoints);
    await append(instanceStream(MINE), instanceEvent<InstanceCreated>('InstanceCreated', AT, { instance_id: MINE, account: 'acme' }));
    await append(instanceStream(THEIRS), instanceEvent<InstanceCreated>('InstanceCreated', AT, { instance_id: THEIRS, account: 'other' }));
  });
  afterEach(async () => {
    await Promise.all(feeds.splice(0).map((f) => f.close()));
    await endpoints.stop();
  });

  it('starts with the next event, and gives the account only its own instances', async () => {
    await append(messageStream(MINE, 'OLD'), received('1', 'before the reader came'));
    const feed = await open({});
    await append(messageStream(THEIRS, 'M1'), received('2', 'not yours'));
    await append(messageStream(MINE, 'M2'), received('3', 'yours'));
    const [event] = await take(feed, 1);
    expect(event).toEqual(expect.objectContaining({ type: 'message.received', instance_id: MINE, data: expect.objectContaining({ text: 'yours' }) }));
  });

  it('resumes right after a given event, inside its commit too, and filters by type', async () => {
    await append(instanceStream(MINE), instanceEvent('InstanceDisconnected', AT, { reason: 'connection_lost' }), instanceEvent('InstanceReset', AT, {}));
    await append(messageStream(MINE, 'M1'), received('1', 'hello'));
    const { commits } = await store.readPattern(instanceStream(MINE), 0, 10);
    const twoEvents = commits.at(-1)!.sequence;
    const all = await take(await open({ instanceId: MINE, lastEventId: `evt_${twoEvents}_0` }), 2);
    expect(all.map((e) => [e.id, e.type])).toEqual([
      [`evt_${twoEvents}_1`, 'instance.reset'],
      [expect.stringMatching(/^evt_/), 'message.received'],
    ]);
    const filtered = await take(await open({ instanceId: MINE, lastEventId: `evt_${twoEvents}_0`, types: ['message.received'] }), 1);
    expect(filtered.map((e) => e.type)).toEqual(['message.received']);
  });

  it("ends the account's feed with instance_state_catching_up, not skipping a new instance's events, when the directory cannot learn the instance", async () => {
    // A directory that stopped following the log (its subscription broken: NATS electing a leader, say) before the
    // account's new instance was created: its events must not be taken for another account's and skipped.
    const frozen = new EndpointDirectory(store, testLogger('endpoints'));
    frozen.start();
    expect(await frozen.catchUp(1_000)).toBe(true);
    await frozen.stop();
    const feed = await new LiveEvents(store, frozen).open(query({}));
    feeds.push(feed);
    const NEW = instanceIdFor('acme', 'c3');
    await append(instanceStream(NEW), instanceEvent<InstanceCreated>('InstanceCreated', AT, { instance_id: NEW, account: 'acme' }));
    await append(messageStream(MINE, 'M1'), received('1', 'after the new instance'));
    // The reader reconnects with the last id it got and reads the new instance's events from there.
    await expect(take(feed, 1)).rejects.toMatchObject({ code: 'instance_state_catching_up' });
  });

  it('refuses unknown types, ids that are not event ids or lie past the end, and other accounts’ instances', async () => {
    await expect(live.open(query({ types: ['message.nope'] }))).rejects.toMatchObject({ code: 'invalid_types' });
    await expect(live.open(query({ lastEventId: 'evt_x' }))).rejects.toMatchObject({ code: 'invalid_last_event_id' });
    await expect(live.open(query({ lastEventId: 'evt_999_0' }))).rejects.toMatchObject({ code: 'invalid_last_event_id' });
    await expect(live.open(query({ instanceId: THEIRS }))).rejects.toMatchObject({ code: 'instance_not_found' });
  });
});
