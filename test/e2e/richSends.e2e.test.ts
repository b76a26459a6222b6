import type { SandboxPlatform } from '../../services/sessions/src/connector/sandbox';
import { sandboxGroupsOf } from '../../services/sessions/src/connector/sandbox/sandboxChats';
import { startStack, type TestStack } from '../harness/stack';
import { WebhookReceiver } from '../harness/webhookReceiver';
import { eventually } from '../harness/wait';
import { linkedSandboxInstance, sandboxOf } from '../harness/sandboxLink';

type HistoryEvent = { type: string; stream: string; data: Record<string, unknown> };

const CARD = 'BEGIN:VCARD\nVERSION:3.0\nN:Doe;Jane;;;\nFN:Jane Doe\nTEL;type=CELL;waid=4915112345678:+49 151 12345678\nEND:VCARD';

/**
 * Replies, locations, contact cards, reactions, typing and groups over HTTP with the sandbox connector: what the
 * platform took, the receipts, and a 400 with its own code for every kind of bad input.
 */
describe('richer sends and groups over HTTP with the sandbox connector', () => {
  let stack: TestStack;
  let receiver: WebhookReceiver;
  const typing = { msPerChar: 10, minMs: 100, maxMs: 300 };

  beforeAll(async () => {
    receiver = new WebhookReceiver();
    await receiver.start();
    stack = await startStack({}, true, { typing });
  });
  afterAll(async () => {
    await stack.close();
    await receiver.stop();
  });

  const sandbox = (): SandboxPlatform => sandboxOf(stack);

  const history = async (id: string, messageId: string): Promise<HistoryEvent[]> =>
    (await stack.call(`/v1/history?instance_id=${id}&message_id=${messageId}`)).body.events as HistoryEvent[];

  const linked = (number: string): Promise<string> => linkedSandboxInstance(stack, number);

  const post = (path: string, body: Record<string, unknown>) => stack.call(path, { method: 'POST', body: JSON.stringify(body) });

  const readIn = (id: string, messageId: string) =>
    eventually(
      () => history(id, messageId),
      (events) => events.some((e) => e.type === 'MessageRead'),
    );

  const sentRecord = (id: string, messageId: string) =>
    eventually(
      async () =>
        sandbox()
          .sent(id)
          .find((s) => s.messageId === messageId),
      (found) => found !== undefined,
    );

  /** The in_… id of the text a contact sent the instance (through the sandbox). */
  const inboundFrom = async (id: string, from: string, text: string, groupId?: string): Promise<HistoryEvent> => {
    const group = groupId ? `&group_id=${encodeURIComponent(groupId)}` : '';
    expect((await stack.call(`/v1/sandbox/inbound?instance_id=${id}&from=${from}&text=${encodeURIComponent(text)}${group}`)).status).toBe(200);
    const found = await eventually(
      async () =>
        ((await stack.call(`/v1/history?instance_id=${id}&types=MessageReceived&limit=1000`)).body.events as HistoryEvent[]).find((e) => e.data.text === text),
      (event) => event !== undefined,
    );
    return found!;
  };

  it('sends a location, a contact card, a reply and reactions (POST and GET), each read like a text', async () => {
    const id = await linked('4915100000101');
    const to = '4917600000101';
    const location = await post('/v1/send', { instance_id: id, number: to, type: 'location', latitude: 52.5163, longitude: 13.3777, name: 'Brandenburg Gate' });
    expect(location.status).toBe(200);
    const locationId = location.body.message_id as string;
    expect((await sentRecord(id, locationId))?.location).toEqual({ latitude: 52.5163, longitude: 13.3777, name: 'Brandenburg Gate' });
    expect((await readIn(id, locationId)).map((e) => e.type)).toEqual(['MessageAccepted', 'MessageSent', 'MessageDelivered', 'MessageRead']);
    expect((await history(id, locationId))[0]?.data).toMatchObject({
      type: 'location',
      location: { latitude: 52.5163, longitude: 13.3777, name: 'Brandenburg Gate' },
    });

    const contact = await stack.call(`/v1/send?instance_id=${id}&number=${to}&type=contact&vcard=${encodeURIComponent(CARD)}`);
    expect(contact.status).toBe(200);
    expect((await sentRecord(id, contact.body.message_id as string))?.contact).toEqual({ vcard: CARD, displayName: 'Jane Doe' });

    // A reply to a message the instance received, and one to a message it sent.
    const received = await inboundFrom(id, to, 'Is the parcel on its way?');
    const replyId = (await post('/v1/send', { instance_id: id, number: to, type: 'text', message: 'Yes, today', quoted_message_id: received.data.message_id }))
      .body.message_id as string;
    expect((await sentRecord(id, replyId))?.quoted).toEqual({
      fromMe: false,
      id: received.data.platform_message_id,
      chat: to,
      participant: null,
      text: 'Is the parcel on its way?',
    });
    expect((await history(id, replyId))[0]?.data).toMatchObject({ type: 'text', text: 'Yes, today', quoted_message_id: received.data.message_id });

    const reaction = await stack.call(`/v1/send?instance_id=${id}&number=${to}&type=reaction&message_id=${replyId}&emoji=${encodeURIComponent('👍🏽')}`);
    expect(reaction.status).toBe(200);
    expect((await sentRecord(id, reaction.body.message_id as string))?.reaction).toEqual({
      target: { fromMe: true, id: replyId, chat: to, participant: null, text: 'Yes, today' },
      emoji: '👍🏽',
    });
    expect((await readIn(id, reaction.body.message_id as string)).length).toBe(4);
  });

  it('answers bad input with a 400 and its own code, and a message of another chat or none at all as such', async () => {
    const id = await linked('4915100000102');
    const to = '4917600000102';
    const sent = (await post('/v1/send', { instance_id: id, number: to, type: 'text', message: 'first' })).body.message_id as string;
    const cases: Array<[Record<string, unknown>, number, string]> = [
      [{ type: 'location', latitude: 90.5, longitude: 0 }, 400, 'invalid_latitude'],
      [{ type: 'location', latitude: 10, longitude: -181 }, 400, 'invalid_longitude'],
      [{ type: 'location', latitude: 10 }, 400, 'missing_location'],
      [{ type: 'contact', vcard: `BEGIN:VCARD\nNOTE:${'x'.repeat(9_000)}\nEND:VCARD` }, 400, 'vcard_too_large'],
      [{ type: 'contact', vcard: 'not a card' }, 400, 'invalid_vcard'],
      [{ type: 'contact' }, 400, 'missing_vcard'],
      [{ type: 'reaction', emoji: '👍' }, 400, 'missing_message_id'],
      [{ type: 'reaction', message_id: sent, emoji: '👍👍' }, 400, 'invalid_emoji'],
      [{ type: 'reaction', message_id: sent, emoji: 'ok' }, 400, 'invalid_emoji'],
      [{ type: 'reaction', message_id: 'nonsense', emoji: '👍' }, 400, 'invalid_message_id'],
      [{ type: 'reaction', message_id: `m_${'0'.repeat(32)}`, emoji: '👍' }, 404, 'message_not_found'],
      [{ type: 'text', message: 'x', quoted_message_id: `in_${'0'.repeat(24)}` }, 404, 'message_not_found'],
      [{ type: 'sticker' }, 400, 'invalid_request'],
    ];
    for (const [fields, status, code] of cases) {
      const answer = await post('/v1/send', { instance_id: id, number: to, ...fields });
      expect([JSON.stringify(fields).slice(0, 60), answer.status, answer.body.code]).toEqual([JSON.stringify(fields).slice(0, 60), status, code]);
    }
    const otherChat = await post('/v1/send', { instance_id: id, number: '4917600000999', type: 'reaction', message_id: sent, emoji: '👍' });
    expect([otherChat.status, otherChat.body.code]).toEqual([400, 'message_not_in_chat']);
    // Another account's instance: not found, before its messages are looked at.
    const foreign = await stack.call('/v1/send', {
      method: 'POST',
      account: 'someone-else',
      body: JSON.stringify({ instance_id: id, number: to, type: 'reaction', message_id: sent, emoji: '👍' }),
    });
    expect([foreign.status, foreign.body.code]).toEqual([404, 'instance_not_found']);
  });

  it('shows "typing…" before a text for a time that grows with its length, then paused', async () => {
    const id = await linked('4915100000103');
    const short = (await post('/v1/send', { instance_id: id, number: '4917600000103', type: 'text', message: 'hi' })).body.message_id as string;
    const long = (await post('/v1/send', { instance_id: id, number: '4917600000103', type: 'text', message: 'x'.repeat(100) })).body.message_id as string;
    await sentRecord(id, long);
    const presences = sandbox().typing(id);
    expect(presences.map((p) => [p.to, p.typing])).toEqual([
      ['4917600000103', true],
      ['4917600000103', false],
      ['4917600000103', true],
      ['4917600000103', false],
    ]);
    const [s0, s1, l0, l1] = presences.map((p) => p.at) as [number, number, number, number];
    // 'hi': the minimum (100 ms); 100 characters at 10 ms: the maximum (300 ms). Timers may fire late, never early.
    expect(s1 - s0).toBeGreaterThanOrEqual(typing.minMs - 5);
    expect(l1 - l0).toBeGreaterThanOrEqual(typing.maxMs - 5);
    expect(l1 - l0).toBeLessThan(typing.maxMs + 2_000);
    const acceptedAt = (await history(id, short))[0];
    expect(acceptedAt?.type).toBe('MessageAccepted');
    // A location is not typed.
    await sentRecord(
      id,
      (await post('/v1/send', { instance_id: id, number: '4917600000103', type: 'location', latitude: 1, longitude: 2 })).body.message_id as string,
    );
    expect(sandbox().typing(id)).toHaveLength(4);
  });

  it('lists groups, sends to one (same fields, idempotency and receipts as send) and reports group messages with their participant', async () => {
    const number = '4915100000104';
    const id = await linked(number);
    // Through the client generated from the OpenAPI document: what the document promises is what answers.
    const api = stack.client();
    const listed = await api.GET('/list_groups', { params: { query: { instance_id: id } } });
    expect(listed.response.status).toBe(200);
    const groups = sandboxGroupsOf(number);
    expect(listed.data?.groups).toEqual(groups);
    const group = groups[1]!.id;
    expect(group).toMatch(/^\d+-\d+@g\.us$/);

    const body = { instance_id: id, group_id: group, type: 'text' as const, message: 'Meeting at 3' };
    const header = { 'idempotency-key': 'group-order-1' };
    const first = await api.POST('/send_group', { body, params: { header } });
    const repeat = await api.POST('/send_group', { body, params: { header } });
    expect(first.response.status).toBe(200);
    expect(repeat.data?.message_id).toBe(first.data?.message_id);
    const messageId = first.data!.message_id;
    expect((await readIn(id, messageId)).map((e) => [e.type, e.data.to])).toEqual([
      ['MessageAccepted', group],
      ['MessageSent', group],
      ['MessageDelivered', group],
      ['MessageRead', group],
    ]);
    expect(
      sandbox()
        .sent(id)
        .filter((s) => s.messageId === messageId),
    ).toHaveLength(1);

    const set = await stack.call(
      `/v1/set_webhook?instance_id=${id}&enable=true&events=message.received&webhook_url=${encodeURIComponent(receiver.url('/groups'))}`,
    );
    receiver.secret('/groups', set.body.signing_secret as string);
    const inbound = await inboundFrom(id, '4917600000104', 'See you there', group);
    expect(inbound.data).toMatchObject({ from: '4917600000104', group_id: group, text: 'See you there' });
    const [hook] = await receiver.waitFor('/groups', 1);
    expect(hook?.body).toMatchObject({ type: 'message.received', data: { from: '4917600000104', group_id: group, text: 'See you there' } });
    const location = await stack.call(`/v1/send_group?instance_id=${id}&group_id=${encodeURIComponent(group)}&type=location&latitude=48.1&longitude=11.5`);
    expect(location.status).toBe(200);
    const reaction = await post('/v1/send_group', { instance_id: id, group_id: group, type: 'reaction', message_id: inbound.data.message_id, emoji: '🎉' });
    expect(reaction.status).toBe(200);
    expect((await sentRecord(id, reaction.body.message_id as string))?.reaction?.target).toEqual({
      fromMe: false,
      id: inbound.data.platform_message_id,
      chat: group,
      participant: '4917600000104',
      text: 'See you there',
    });

    // A group the account is not in fails as a number without an account does.
    const stranger = (await post('/v1/send_group', { instance_id: id, group_id: '120363000000000001@g.us', type: 'text', message: 'hello?' })).body
      .message_id as string;
    const failed = await eventually(
      () => history(id, stranger),
      (events) => events.some((e) => e.type === 'MessageFailed'),
    );
    expect(failed.at(-1)?.data.reason).toBe('recipient_not_on_platform');
  });

  it('refuses a group id of another form, and list_groups of an instance that is not connected', async () => {
    const id = await linked('4915100000105');
    // An empty group_id is a bad group id too, not a bad number: send_group takes no number.
    for (const bad of ['', '4915112345678', '4915112345678@s.whatsapp.net', 'team@g.us', '1-2@g.us']) {
      const answer = await post('/v1/send_group', { instance_id: id, group_id: bad, type: 'text', message: 'x' });
      expect([bad, answer.status, answer.body.code]).toEqual([bad, 400, 'invalid_group_id']);
      const query = await stack.call(`/v1/send_group?instance_id=${id}&group_id=${encodeURIComponent(bad)}&type=text&message=x`);
      expect([bad, query.status, query.body.code]).toEqual([bad, 400, 'invalid_group_id']);
    }
    // A simulated message in a group the instance is not in is a bad group id, not a connection that is down.
    const elsewhere = await stack.call(`/v1/sandbox/inbound?instance_id=${id}&from=4917600000104&text=hi&group_id=120363000000000001@g.us`);
    expect([elsewhere.status, elsewhere.body.code]).toEqual([400, 'invalid_group_id']);
    const fresh = (await stack.call('/v1/create_instance')).body.instance_id as string;
    const notConnected = await stack.call(`/v1/list_groups?instance_id=${fresh}`);
    expect([notConnected.status, notConnected.body.code]).toEqual([409, 'not_connected']);
    const other = await stack.call(`/v1/list_groups?instance_id=${id}`, { account: 'someone-else' });
    expect(other.status).toBe(404);
  });
});
