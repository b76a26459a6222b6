import { InMemoryEventStore, messageEvent, messageStream, usableCheckpoint, type Commit, type MessageEvent } from '@wagw/lib';
import { SendLedger } from './sendLedger';

const TODAY = '2026-11-23T10:00:00.000Z';
let sequence = 0;
const commit = (instanceId: string, messageId: string, ...events: MessageEvent[]): Commit => {
  const stream = messageStream(instanceId, messageId);
  const at = ++sequence;
  return { stream, sequence: at, commandId: `c${at}`, events: events.map((e) => ({ ...e, stream, sequence: at })) };
};
const accepted = (messageId: string, at = TODAY) =>
  messageEvent('MessageAccepted', at, { message_id: messageId, to: '4915199999999', type: 'text', text: 'hi', media_url: null, filename: null });
const sent = (messageId: string) => messageEvent('MessageSent', TODAY, { message_id: messageId, to: '4915199999999' });

describe('send ledger', () => {
  it('counts queued sends and sends accepted today, and comes back equal from its checkpoint', () => {
    const ledger = new SendLedger();
    ledger.apply(commit('I1', 'm1', accepted('m1', '2026-11-22T23:59:00.000Z')));
    ledger.apply(commit('I1', 'm2', accepted('m2')));
    ledger.apply(commit('I1', 'm3', accepted('m3')));
    ledger.apply(commit('I1', 'm2', sent('m2')));
    ledger.apply(commit('I2', 'm4', accepted('m4')));
    expect([ledger.queued('I1'), ledger.acceptedOn('I1', new Date(TODAY)), ledger.queued('I2')]).toEqual([2, 2, 1]);

    const restored = new SendLedger();
    restored.restore(ledger.serialize());
    expect([restored.queued('I1'), restored.acceptedOn('I1', new Date(TODAY)), restored.queued('I2')]).toEqual([2, 2, 1]);
    expect(restored.serialize()).toBe(ledger.serialize());
    // It keeps counting from there.
    restored.apply(commit('I1', 'm3', sent('m3')));
    expect(restored.queued('I1')).toBe(1);
  });

  it('takes a send delivered or read without its sent (that receipt was lost) off the queue: it went out', () => {
    const ledger = new SendLedger();
    ledger.apply(commit('D1', 'm1', accepted('m1')));
    ledger.apply(commit('D1', 'm2', accepted('m2')));
    ledger.apply(commit('D1', 'm3', accepted('m3')));
    ledger.apply(commit('D1', 'm1', messageEvent('MessageDelivered', TODAY, { message_id: 'm1', to: '4915199999999' })));
    ledger.apply(commit('D1', 'm2', messageEvent('MessageRead', TODAY, { message_id: 'm2', to: '4915199999999' })));
    expect([...ledger.queuedSends('D1')].map((q) => q.stream)).toEqual([messageStream('D1', 'm3')]);
  });
});

describe('send ledger as the queue of waiting sends', () => {
  it('lists an instance’s queued sends oldest first with their sequence and acceptance time, and forgets settled ones', () => {
    const ledger = new SendLedger();
    // Named so that stream order is the reverse of log order: the queue (and its checkpoint) keeps log order.
    const first = commit('Q1', 'mz', accepted('mz', '2026-11-23T09:00:00.000Z'));
    const second = commit('Q1', 'ma', accepted('ma', '2026-11-23T09:01:00.000Z'));
    // In log order, as the projection applies them.
    ledger.apply(first);
    ledger.apply(second);
    ledger.apply(commit('Q2', 'm3', accepted('m3')));
    expect([...ledger.queuedSends('Q1')]).toEqual([
      { stream: first.stream, sequence: first.sequence, acceptedAt: Date.parse('2026-11-23T09:00:00.000Z') },
      { stream: second.stream, sequence: second.sequence, acceptedAt: Date.parse('2026-11-23T09:01:00.000Z') },
    ]);
    ledger.apply(commit('Q2', 'm3', messageEvent('MessageFailed', TODAY, { message_id: 'm3', to: '4915199999999', reason: 'expired' })));
    expect(ledger.instancesWithQueued()).toEqual(['Q1']);
    expect([ledger.isQueued('Q1', first.stream), ledger.isQueued('Q2', messageStream('Q2', 'm3'))]).toEqual([true, false]);
    const restored = new SendLedger();
    restored.restore(ledger.serialize());
    expect([...restored.queuedSends('Q1')]).toEqual([...ledger.queuedSends('Q1')]);
    expect(restored.serialize()).toBe(ledger.serialize());
  });
});

describe('send ledger checkpoint (version 4: columns)', () => {
  it('restores a big ledger exactly, in log order, in under 45 bytes a send', () => {
    const ledger = new SendLedger();
    const instances = [...Array.from({ length: 30 }, (_, i) => `BIG${String(i).padStart(17, '0')}`), 'ONEBIGINSTANCE000000'];
    let sends = 0;
    for (let i = 0; i < 60_000; i++) {
      // 30 instances of 1,000 sends and one of 30,000; clocks that step back now and then (replicas' differ).
      const id = instances[i < 30_000 ? i % 30 : 30]!;
      const at = new Date(Date.parse(TODAY) + i * 37 - (i % 7 === 0 ? 5_000 : 0)).toISOString();
      const messageId = `m_${(i * 2_654_435_761).toString(16).padStart(32, '0')}`;
      ledger.apply(commit(id, messageId, accepted(messageId, at)));
      sends += 1;
      if (i % 5 === 0) {
        ledger.apply(commit(id, messageId, sent(messageId)));
        sends -= 1;
      }
    }
    const body = ledger.serialize();
    expect(body.length).toBeLessThan(45 * sends);
    const restored = new SendLedger();
    restored.restore(body);
    for (const id of instances) expect([...restored.queuedSends(id)]).toEqual([...ledger.queuedSends(id)]);
    expect(instances.reduce((n, id) => n + restored.queued(id), 0)).toBe(sends);
    expect(restored.acceptedOn('ONEBIGINSTANCE000000', new Date(TODAY))).toBe(ledger.acceptedOn('ONEBIGINSTANCE000000', new Date(TODAY)));
    expect(restored.serialize()).toBe(body);
  });

  it('refuses a checkpoint of version 3 (triples): not usable, and not misread if restored anyway', async () => {
    const store = new InMemoryEventStore();
    const stream = messageStream('OLD', 'm1');
    await store.append(stream, [accepted('m1')], { expectedVersion: 'any', commandId: 'c-old' });
    const v3Body = JSON.stringify([['OLD', { queued: [[stream, 1, Date.parse(TODAY)]], day: '2026-11-23', today: 1 }]]);
    const ledger = new SendLedger();
    const v3 = { model: ledger.model, modelVersion: 3, position: 1, commandId: 'c-old', body: v3Body };
    expect(await usableCheckpoint(v3, ledger.modelVersion, store, ledger.pattern)).toBe(false);
    expect(await usableCheckpoint({ ...v3, modelVersion: 4 }, ledger.modelVersion, store, ledger.pattern)).toBe(true);
    expect(() => ledger.restore(v3Body)).toThrow(/not columns/);
  });
});
