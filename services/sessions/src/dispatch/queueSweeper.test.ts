import { InMemoryEventStore, instanceIdFor, messageEvent, messageStream, type Logger, type MessageAccepted } from '@wagw/lib';
import type { InstanceRegistry } from '../registry/instanceRegistry';
import type { QueuedSend, SendQueue } from '../registry/sendLedger';
import type { LocalSends } from './localSends';
import { QueueSweeper, UNREADABLE_ALARM_MS } from './queueSweeper';

// The sweeper against a ledger that lists sends as queued and a store that holds (or lacks) their MessageAccepted:
// what it hands to the lane, and what it tells the operator about a send it cannot read.

const ID = instanceIdFor('acme', 'sweeper');

const rig = async (stored: string[], queued: string[]) => {
  const events = new InMemoryEventStore();
  for (const messageId of stored) {
    const accepted = messageEvent<MessageAccepted>('MessageAccepted', new Date().toISOString(), {
      message_id: messageId,
      to: '4915199999999',
      type: 'text',
      text: messageId,
      media_url: null,
      filename: null,
    });
    await events.append(messageStream(ID, messageId), [accepted], { expectedVersion: 0, commandId: `accept-${messageId}` });
  }
  let sends: QueuedSend[] = queued.map((messageId, i) => ({ stream: messageStream(ID, messageId), sequence: i + 1, acceptedAt: Date.now() }));
  const queue: SendQueue = {
    queued: () => sends.length,
    queuedSends: () => sends,
    instancesWithQueued: () => (sends.length > 0 ? [ID] : []),
    isQueued: (_id, stream) => sends.some((s) => s.stream === stream),
    onQueued: () => undefined,
  };
  const handed: string[] = [];
  const said: string[] = [];
  const logger = {
    error: (_fields: unknown, text: string) => void said.push(`error: ${text}`),
    warn: (_fields: unknown, text: string) => void said.push(`warn: ${text}`),
  } as unknown as Logger;
  // A send handed to the lane is busy there until it settles (leaves the queue).
  const local = {
    busy: (stream: string) => handed.some((m) => messageStream(ID, m) === stream),
    prune: () => ({ again: [], leftAlone: [] }),
  } as unknown as LocalSends;
  const sweeper = new QueueSweeper({
    events,
    queue,
    registry: {} as InstanceRegistry,
    local,
    sendsHere: () => true,
    send: (_id, accepted) => void handed.push(accepted.data.message_id),
    inLane: () => 0,
    fail: async () => undefined,
    forget: () => undefined,
    logger,
    ttlMs: 60_000,
    everyMs: 1_000,
  });
  const settle = (messageId: string): void => void (sends = sends.filter((s) => s.stream !== messageStream(ID, messageId)));
  const queueAgain = (messageId: string): void => void sends.push({ stream: messageStream(ID, messageId), sequence: sends.length + 1, acceptedAt: Date.now() });
  return { sweeper, handed, said, settle, queueAgain };
};

const UNREADABLE = "warn: a queued send's stream read without its MessageAccepted; read again on the next sweep";
const STILL_UNREADABLE =
  "error: a queued send's stream still reads without its MessageAccepted: it cannot go out, and the instance's later sends wait behind it";

describe('QueueSweeper', () => {
  afterEach(() => jest.restoreAllMocks());

  it("hands the instance's queued sends to its lane, oldest first", async () => {
    const { sweeper, handed, said } = await rig(['m1', 'm2'], ['m1', 'm2']);
    await sweeper.sweep();
    expect(handed).toEqual(['m1', 'm2']);
    expect(said).toEqual([]);
  });

  it('warns once that a queued send read without its MessageAccepted, and says it as an error once it lasted a minute', async () => {
    const { sweeper, handed, said } = await rig(['m2'], ['m1', 'm2']);
    const start = Date.now();
    const clock = jest.spyOn(Date, 'now').mockReturnValue(start);
    await sweeper.sweep();
    await sweeper.sweep();
    expect(handed).toEqual(['m2']);
    expect(said).toEqual([UNREADABLE]);
    clock.mockReturnValue(start + UNREADABLE_ALARM_MS);
    await sweeper.sweep();
    await sweeper.sweep();
    expect(said).toEqual([UNREADABLE, STILL_UNREADABLE]);
  });

  it('says it again for a send queued again after it left the queue', async () => {
    const { sweeper, said, settle, queueAgain } = await rig([], ['m1']);
    await sweeper.sweep();
    settle('m1');
    await sweeper.sweep();
    expect(said).toEqual([UNREADABLE]);
    queueAgain('m1');
    await sweeper.sweep();
    expect(said).toEqual([UNREADABLE, UNREADABLE]);
  });
});
