import { initAuthCreds } from '@whiskeysockets/baileys';
import { testLogger } from '../../../../../test/harness/logger';
import { AuthStateStore } from './kvAuthState';
import { MemoryTextBucket } from './textBucket';

/** A bucket whose writes wait until released, and fail for the keys told to. */
class SlowBucket extends MemoryTextBucket {
  readonly order: string[] = [];
  readonly failing = new Set<string>();
  private readonly waiting: Array<() => void> = [];

  override async put(key: string, value: string): Promise<void> {
    await new Promise<void>((resolve) => this.waiting.push(resolve));
    if (this.failing.has(key)) throw new Error(`cannot write ${key}`);
    this.order.push(key);
    await super.put(key, value);
  }

  /** Lets every write waiting now go on, the latest first (unordered writes would land backwards), and the next ones. */
  async release(): Promise<void> {
    for (let i = 0; i < 20; i++) {
      this.waiting
        .splice(0)
        .reverse()
        .forEach((go) => go());
      await new Promise((resolve) => setImmediate(resolve));
    }
  }
}

const keyPair = { public: Buffer.alloc(32, 1), private: Buffer.alloc(32, 2) };

describe('the auth state store (writes)', () => {
  it('writes an instance one batch after another, in the order asked', async () => {
    const bucket = new SlowBucket();
    const auth = new AuthStateStore(bucket, testLogger()).state('I1', initAuthCreds());
    const first = auth.state.keys.set({ 'pre-key': { '1': keyPair, '2': keyPair } });
    const creds = auth.saveCreds();
    const second = auth.state.keys.set({ 'pre-key': { '3': keyPair } });
    await bucket.release();
    await Promise.all([first, creds, second]);
    expect(bucket.order.slice(0, 2).sort()).toEqual(['I1.pre-key.MQ', 'I1.pre-key.Mg']);
    expect(bucket.order.slice(2)).toEqual(['I1.creds', 'I1.pre-key.Mw']);
  });

  it('throws when a key write fails (so Baileys retries the transaction), and goes on with later writes', async () => {
    const bucket = new SlowBucket();
    bucket.failing.add('I1.pre-key.MQ');
    const auth = new AuthStateStore(bucket, testLogger()).state('I1', initAuthCreds());
    const failed = auth.state.keys.set({ 'pre-key': { '1': keyPair, '2': keyPair } });
    const later = auth.state.keys.set({ 'pre-key': { '3': keyPair } });
    const settled = Promise.allSettled([failed, later]);
    await bucket.release();
    const [first, second] = await settled;
    expect(first).toMatchObject({ status: 'rejected', reason: new Error('cannot write I1.pre-key.MQ') });
    expect(second.status).toBe('fulfilled');
    expect(bucket.order).toEqual(['I1.pre-key.Mg', 'I1.pre-key.Mw']);
  });

  it('logs and raises a failed creds write; flush waits for it without throwing', async () => {
    const bucket = new SlowBucket();
    bucket.failing.add('I1.creds');
    const logger = testLogger();
    const errors = jest.spyOn(logger, 'error');
    const auth = new AuthStateStore(bucket, logger).state('I1', initAuthCreds());
    const saving = auth.saveCreds();
    const flushed = auth.flush();
    const outcome = saving.then(
      () => 'saved',
      (error: Error) => error.message,
    );
    await bucket.release();
    expect(await outcome).toBe('cannot write I1.creds');
    await expect(flushed).resolves.toBeUndefined();
    expect(errors).toHaveBeenCalledWith(expect.objectContaining({ instanceId: 'I1' }), 'saving the WhatsApp credentials failed');
  });

  it('purges after the writes already queued, so none lands after it', async () => {
    const bucket = new SlowBucket();
    const store = new AuthStateStore(bucket, testLogger());
    const auth = store.state('I1', initAuthCreds());
    const saving = auth.saveCreds();
    const purging = store.purge('I1');
    await bucket.release();
    await Promise.all([saving, purging]);
    expect(bucket.entries.size).toBe(0);
  });

  it('refuses an instance id that cannot name a KV key', async () => {
    const store = new AuthStateStore(new MemoryTextBucket(), testLogger());
    await expect(store.readCreds('a.b')).rejects.toThrow(/cannot name a KV key/);
  });
});
