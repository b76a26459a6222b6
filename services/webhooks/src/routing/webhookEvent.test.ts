import type { Commit } from '@wagw/lib';
import { parseWebhookEventId, webhookEventsOf } from './webhookEvent';

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

  it('says where the media of a received message is fetched, and adds nothing to one without media', () => {
    const media = { mimetype: 'image/jpeg', filename: null, size: 1234 };
    const stream = '0123456789ABCDEF0123.message.in_5b0e3c9a1f2d4e6f8a7b9c0d';
    const [withMedia, textOnly] = webhookEventsOf(
      commit(
        stream,
        ['MessageReceived', { message_id: 'in_5b0e3c9a1f2d4e6f8a7b9c0d', from: '4917612345678', text: null, media }],
        ['MessageReceived', { text: 'hi', media: null }],
      ),
    );
    expect(withMedia?.data.media).toEqual({
      ...media,
      url: '/v1/media?instance_id=0123456789ABCDEF0123&message_id=in_5b0e3c9a1f2d4e6f8a7b9c0d',
    });
    expect(textOnly?.data.media).toBeNull();
  });

  it("gives an erased message's media no url: the file cannot be fetched any more (GET /v1/media answers 404)", () => {
    const [erased] = webhookEventsOf(
      commit('0123456789ABCDEF0123.message.in_5b0e3c9a1f2d4e6f8a7b9c0d', [
        'MessageReceived',
        { message_id: 'in_5b0e3c9a1f2d4e6f8a7b9c0d', text: null, media: { mimetype: 'image/jpeg', filename: null, size: 1234 }, erased: true },
      ]),
    );
    expect(erased?.data.media).toEqual({ mimetype: 'image/jpeg', filename: null, size: 1234, url: null });
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

describe('webhook ids as stream positions', () => {
  it('reads an id back as its commit sequence and index, and refuses anything else', () => {
    expect(parseWebhookEventId('evt_1042_3')).toEqual({ sequence: 1042, index: 3 });
    for (const bad of ['', 'evt_0_0', 'evt_1_', 'evt_-1_0', 'evt_1_0 ', 'evt_99999999999999999_0', 'id_1_0']) expect(parseWebhookEventId(bad)).toBeNull();
  });

  it('skips the events of a commit before a given place (resuming inside a commit)', () => {
    const events = webhookEventsOf(commit('0123456789ABCDEF0123.instance', ['InstanceDisconnected', { reason: 'x' }], ['InstanceReset', {}]), 1);
    expect(events.map((e) => e.id)).toEqual(['evt_42_1']);
  });
});
