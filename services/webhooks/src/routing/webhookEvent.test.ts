import type { Commit } from '@wagw/lib';
import { webhookEventsOf } from './webhookEvent';

const commit = (stream: string, ...events: Array<[string, Record<string, unknown>]>): Commit => ({
  stream,
  sequence: 42,
  commandId: 'c',
  events: events.map(([type, data]) => ({ type, data, schemaVersion: 1, occurredAt: '2026-11-22T10:00:00.000Z', stream, sequence: 42 })),
});

describe('webhook events from domain events', () => {
  it('turns lifecycle events into instance.* webhook events with a stable id', () => {
    const events = webhookEventsOf(commit('0123456789ABCDEF0123.instance', ['InstanceDisconnected', { reason: 'connection_lost' }], ['InstanceReset', {}]));
    expect(events).toEqual([
      {
        id: 'evt_42_0',
        type: 'instance.disconnected',
        instance_id: '0123456789ABCDEF0123',
        timestamp: '2026-11-22T10:00:00.000Z',
        data: { reason: 'connection_lost' },
      },
      { id: 'evt_42_1', type: 'instance.reset', instance_id: '0123456789ABCDEF0123', timestamp: '2026-11-22T10:00:00.000Z', data: {} },
    ]);
  });

  it('adds the message id to message.* events', () => {
    const [event] = webhookEventsOf(commit('0123456789ABCDEF0123.message.M1', ['MessageDelivered', { to: '4915112345678' }]));
    expect(event).toMatchObject({ type: 'message.delivered', data: { to: '4915112345678', message_id: 'M1' } });
  });

  it('tells receivers nothing about internal events (creation, webhook settings, QR codes)', () => {
    expect(
      webhookEventsOf(
        commit(
          '0123456789ABCDEF0123.instance',
          ['InstanceCreated', { account: 'a' }],
          ['WebhookConfigured', { url: 'x', enabled: true }],
          ['InstanceQrIssued', {}],
        ),
      ),
    ).toEqual([]);
  });
});
