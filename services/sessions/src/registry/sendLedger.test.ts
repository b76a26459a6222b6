import { messageEvent, messageStream, type Commit, type MessageEvent } from '@wagw/lib';
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
