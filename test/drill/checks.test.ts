import { Webhook } from 'standardwebhooks';
import {
  checkConnections,
  checkHistory,
  checkSends,
  checkWebhooks,
  describeStuckInstance,
  expectedWebhookIds,
  receiptsMayBeLost,
  takeoverMs,
  type HistoryEvent,
} from './checks';
import type { SendRecord } from './load';
import { acceptedAgainAfter, longestGapWithoutAcceptance } from './load';

/** The drill's verdicts must catch what they claim to: each check fed a broken case fails it. */
const I = 'AAAAAAAAAAAAAAAAAAAA';
const ev = (sequence: number, type: string, message?: string, data: Record<string, unknown> = {}): HistoryEvent => ({
  sequence,
  stream: message ? `${I}.message.${message}` : `${I}.instance`,
  type,
  data,
});
const send = (key: string, ids: string[], acceptedAt?: number, lastAttemptAt = 0): SendRecord => ({
  key,
  instanceId: I,
  attempts: 1,
  messageIds: ids,
  firstAt: 0,
  lastAttemptAt,
  ...(acceptedAt !== undefined ? { acceptedAt } : {}),
});

describe('drill checks', () => {
  it('connections: two live at once are caught, also when one holder was killed and wrote no end', () => {
    const fine = [
      { holder: 'a', online_at: 100, ended_at: 200 },
      { holder: 'b', online_at: 200 },
    ];
    expect(checkConnections(I, fine, [])).toEqual({ failures: [], connections: 2, open: 1 });
    expect(
      checkConnections(
        I,
        [
          { holder: 'a', online_at: 100, ended_at: 300 },
          { holder: 'b', online_at: 250 },
        ],
        [],
      ).failures,
    ).toHaveLength(1);
    // a was SIGKILLed at 500: its connection ended then; b came at 400, before.
    const killed = [
      { holder: 'a', online_at: 100 },
      { holder: 'b', online_at: 400 },
    ];
    expect(checkConnections(I, killed, [{ service: 'sessions', id: 'a', at: 500 }]).failures).toHaveLength(1);
    expect(checkConnections(I, killed, [{ service: 'sessions', id: 'a', at: 350 }]).failures).toEqual([]);
    expect(checkConnections(I, killed, []).failures[0]).toContain('still both open');
    expect(
      takeoverMs(
        [
          { holder: 'a', online_at: 100 },
          { holder: 'b', online_at: 9_350 },
        ],
        [{ service: 'sessions', id: 'a', at: 350 }],
      ),
    ).toBe(9_000);
    expect(takeoverMs([{ holder: 'a', online_at: 100 }], [{ service: 'sessions', id: 'b', at: 350 }])).toBeNull();
  });

  it('history: receipts out of order, a repeat or going back are caught; missing receipts are handed to the caller', () => {
    const good = [
      ev(1, 'InstanceCreated'),
      ev(2, 'MessageAccepted', 'm1'),
      ev(3, 'MessageSent', 'm1'),
      ev(4, 'MessageDelivered', 'm1'),
      ev(5, 'MessageRead', 'm1'),
    ];
    expect(checkHistory(I, good, ['m1'])).toEqual({ failures: [], lacking: [] });
    expect(checkHistory(I, [ev(2, 'MessageAccepted', 'm1'), ev(3, 'MessageDelivered', 'm1'), ev(4, 'MessageSent', 'm1')], ['m1']).failures).toHaveLength(1);
    expect(checkHistory(I, [ev(2, 'MessageAccepted', 'm1'), ev(3, 'MessageSent', 'm1'), ev(4, 'MessageSent', 'm1')], ['m1']).failures).toHaveLength(1);
    expect(checkHistory(I, [ev(3, 'MessageAccepted', 'm1'), ev(2, 'MessageSent', 'm1')], ['m1']).failures.length).toBeGreaterThan(0);
    expect(checkHistory(I, [ev(2, 'MessageAccepted', 'm1')], ['m1', 'm2'])).toEqual({
      failures: [`${I}: message m2 was answered 200 but is not in the history`],
      lacking: [{ id: 'm1', has: ['MessageAccepted'] }],
    });
    expect(receiptsMayBeLost(900, [{ service: 'sessions', id: 'a', at: 1_000 }], 500)).toBe(true);
    expect(receiptsMayBeLost(1_100, [{ service: 'sessions', id: 'a', at: 1_000 }], 500)).toBe(false);
  });

  it('sends: two message ids for one key, an accepted send the platform never took, a take no history accepted are caught', () => {
    const accepted = new Map([[I, new Set(['m1', 'm2'])]]);
    expect(checkSends([send('k1', ['m1']), send('k2', ['m2', 'm2'])], new Map([[I, new Set(['m1', 'm2'])]]), accepted)).toEqual([]);
    expect(checkSends([send('k1', ['m1', 'm3'])], new Map([[I, new Set(['m1'])]]), accepted)).toHaveLength(1);
    expect(checkSends([send('k1', ['m1'])], new Map([[I, new Set<string>()]]), accepted)).toHaveLength(1);
    expect(checkSends([], new Map([[I, new Set(['m9'])]]), accepted)).toHaveLength(1);
  });

  it('webhooks: expected ids follow the commits once the webhook is on; missing, foreign and badly signed ones are caught', () => {
    const events = [
      ev(1, 'InstanceCreated'),
      ev(2, 'InstanceConnected'),
      ev(3, 'WebhookConfigured', undefined, { enabled: true }),
      ev(4, 'InstanceConnected'),
      ev(5, 'MessageAccepted', 'm1'),
      ev(6, 'MessageSent', 'm1'),
      ev(6, 'MessageDelivered', 'm1'),
    ];
    const expected = expectedWebhookIds(events);
    expect(expected).toEqual(['evt_4_0', 'evt_6_0', 'evt_6_1']);
    const secret = `whsec_${Buffer.from('0123456789abcdef0123456789abcdef').toString('base64')}`;
    const hook = (id: string, signWith = secret) => {
      const body = JSON.stringify({ id, type: 'x', instance_id: I, timestamp: new Date().toISOString(), data: {} });
      const at = new Date();
      const signature = new Webhook(signWith).sign(id, at, body);
      return {
        path: '/p',
        headers: { 'webhook-id': id, 'webhook-timestamp': String(Math.floor(at.getTime() / 1000)), 'webhook-signature': signature },
        body,
        at: 0,
      };
    };
    const instance = { id: I, path: '/p', secret };
    const all = expected.map((id) => hook(id));
    expect(checkWebhooks(instance, expected, [...all, all[0]!])).toMatchObject({ failures: [], repeats: 1 });
    expect(checkWebhooks(instance, expected, all.slice(1)).failures).toHaveLength(1);
    expect(checkWebhooks(instance, expected, [...all, hook('evt_99_0')]).failures).toHaveLength(1);
    const other = `whsec_${Buffer.from('fedcba9876543210fedcba9876543210').toString('base64')}`;
    expect(checkWebhooks(instance, expected, [...all, hook('evt_4_0', other)]).failures[0]).toContain('bad signature');
  });

  it('measures the longest window without an accepted send and the recovery after a kill', () => {
    const sends = [send('a', ['1'], 1_000, 900), send('b', ['2'], 1_200, 1_100), send('c', ['3'], 6_000, 1_150), send('d', ['4'], 6_100, 5_000)];
    expect(longestGapWithoutAcceptance(sends, 0, 7_000)).toEqual({ ms: 4_800, from: 1_200 });
    // c's last attempt started before the kill at 1,250 (it may have been stored before): d's counts.
    expect(acceptedAgainAfter(sends, 1_250)).toBe(4_850);
  });

  it('describes a stuck instance: its lease, the connections the platform saw and when its first stuck send came', () => {
    const records = [
      { holder: 'sessions-2', online_at: 9_000 },
      { holder: 'sessions-1', online_at: 1_500, ended_at: 8_000 },
    ];
    expect(describeStuckInstance(I, { count: 3, firstAcceptedAt: 4_000 }, 'connected', { owner: 'sessions-2', until: 12_000 }, records, 1_000, 10_000)).toBe(
      `${I}: post-mortem: 3 accepted send(s) never taken, the first accepted at +3000 ms; state connected; lease held by sessions-2 (expires in 2000 ms); ` +
        'platform connections: sessions-1 +500 ms..+7000 ms, sessions-2 +8000 ms..open',
    );
    expect(describeStuckInstance(I, { count: 1, firstAcceptedAt: null }, 'qr', null, [], 0, 5)).toContain('lease held by nobody; platform connections: none');
  });
});
