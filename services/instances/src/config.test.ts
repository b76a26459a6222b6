import { loadConfig } from './config';

const base = { NATS_URL: 'nats://127.0.0.1:4222' };

describe('instances config', () => {
  it('refuses an OPS_PORT above 65535 with one message naming it', () => {
    expect(() => loadConfig({ ...base, OPS_PORT: '65536' })).toThrow('OPS_PORT must be an integer from 0 to 65535, got "65536"');
    expect(loadConfig({ ...base, OPS_PORT: '0' }).opsPort).toBe(0);
  });

  it('keeps INSTANCE_QUOTA=0 as no limit', () => {
    expect(loadConfig({ ...base, INSTANCE_QUOTA: '0' }).instanceQuota).toBe(0);
  });
});
