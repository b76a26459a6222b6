import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sessionsLogDigest } from './logDigest';

const line = (container: string, fields: Record<string, unknown>): string =>
  `${container}   | 2026-11-28T21:19:35.384197696Z ${JSON.stringify({ time: Date.parse('2026-11-28T21:19:35.383Z'), pid: 1, ...fields })}`;

describe('the sessions log digest of a failed drill', () => {
  let dir: string;
  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'digest-'))));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('keeps what the sessions replicas said of the stuck instances and their warnings, not the noise or other services', () => {
    const file = join(dir, 'stack.log');
    writeFileSync(
      file,
      [
        'Attaching to p_gateway_1, p_sessions-2_1',
        line('sessions-2_1', { level: 40, key: 'AAA', why: 'the lease could not be renewed in time', msg: 'lease lost: stopping its work' }),
        line('sessions-1_1', { level: 30, instanceId: 'AAA', msg: 'taking over a linked instance' }),
        line('sessions-1_1', { level: 30, instanceId: 'BBB', msg: 'taking over a linked instance' }),
        line('sessions-1_1', { level: 40, msg: 'rpc answered unavailable' }),
        line('sessions-1_1', {
          level: 40,
          stream: 'BBB.message.m1',
          err: { message: 'The event store (NATS) is unreachable' },
          msg: 'dispatch failed; will retry',
        }),
        line('webhooks-1_1', { level: 50, instanceId: 'AAA', msg: 'delivery failed' }),
        'sessions-1_1   | not json',
      ].join('\n'),
    );
    expect(sessionsLogDigest(file, ['AAA'], 10)).toEqual([
      'log 21:19:35.383 sessions-2: lease lost: stopping its work AAA the lease could not be renewed in time',
      'log 21:19:35.383 sessions-1: taking over a linked instance AAA',
      'log 21:19:35.383 sessions-1: dispatch failed; will retry BBB.message.m1 (The event store (NATS) is unreachable)',
    ]);
    expect(sessionsLogDigest(file, ['AAA'], 1)).toHaveLength(1);
  });
});
