import { MAX_TIMER_MS } from '@wagw/lib';
import { loadConfig } from './config';

const base = { NATS_URL: 'nats://127.0.0.1:4222' };

describe('webhooks config', () => {
  it('reads the defaults', () => {
    expect(loadConfig(base)).toMatchObject({ concurrency: 256, ackWaitMs: 60_000, slowAfterMs: 5_000, opsPort: 9102 });
  });

  it('refuses WEBHOOK_CONCURRENCY=0, with which no webhook was ever delivered', () => {
    expect(() => loadConfig({ ...base, WEBHOOK_CONCURRENCY: '0' })).toThrow('WEBHOOK_CONCURRENCY must be an integer of at least 1, got "0"');
  });

  it.each(['WEBHOOK_ACK_WAIT_MS', 'WEBHOOK_TIMEOUT_MS', 'WEBHOOK_HEARTBEAT_MS', 'WEBHOOK_PULL_BATCH', 'WEBHOOK_REPLAY_RATE', 'WEBHOOK_CIRCUIT_THRESHOLD'])(
    'refuses %s=0, which means nothing sane',
    (name) => {
      expect(() => loadConfig({ ...base, [name]: '0' })).toThrow(`${name} must be an integer`);
    },
  );

  it('refuses a WEBHOOK_LEADER_TTL_MS its renewals (every 100 ms at least) could not keep', () => {
    expect(() => loadConfig({ ...base, WEBHOOK_LEADER_TTL_MS: '100' })).toThrow('WEBHOOK_LEADER_TTL_MS must be an integer from 200');
    expect(loadConfig({ ...base, WEBHOOK_LEADER_TTL_MS: '200' }).leaderTtlMs).toBe(200);
  });

  it('refuses a WEBHOOK_SLOW_AFTER_MS setTimeout would overflow (it fired at once); 0 hands every attempt over at once', () => {
    expect(() => loadConfig({ ...base, WEBHOOK_SLOW_AFTER_MS: String(MAX_TIMER_MS + 1) })).toThrow(
      `WEBHOOK_SLOW_AFTER_MS must be an integer from 0 to ${MAX_TIMER_MS}`,
    );
    expect(loadConfig({ ...base, WEBHOOK_SLOW_AFTER_MS: '0' }).slowAfterMs).toBe(0);
  });

  it('refuses an OPS_PORT above 65535', () => {
    expect(() => loadConfig({ ...base, OPS_PORT: '65536' })).toThrow('OPS_PORT must be an integer from 0 to 65535, got "65536"');
  });
});
