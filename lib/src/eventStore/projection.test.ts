import { testLogger } from '../../../test/harness/logger';
import { InMemoryEventStore } from './inMemoryEventStore';
import { Projection } from './projection';

describe('Projection.catchUp', () => {
  it('answers false within its time when the end of the log cannot be read in it (a NATS that hangs), not after the request gives up', async () => {
    const store = new InMemoryEventStore();
    // The end's lookup never answers, as a request to a frozen NATS until its own time-out.
    store.version = () => new Promise<number>(() => undefined);
    const projection = new Projection(store, '*.instance', () => undefined, testLogger());
    projection.start();
    const started = Date.now();
    expect(await projection.catchUp(200)).toBe(false);
    expect(Date.now() - started).toBeLessThan(1_000);
    await projection.stop();
  });

  it('answers true once the commits up to the end are applied, and passes on a failed lookup', async () => {
    const store = new InMemoryEventStore();
    await store.append('A.instance', [{ type: 'Noted', schemaVersion: 1, occurredAt: new Date().toISOString(), data: {} }], {
      expectedVersion: 0,
      commandId: 'c1',
    });
    const applied: number[] = [];
    const projection = new Projection(store, '*.instance', (commit) => applied.push(commit.sequence), testLogger());
    projection.start();
    expect(await projection.catchUp(2_000)).toBe(true);
    expect(applied).toEqual([1]);
    store.version = () => Promise.reject(new Error('unreachable'));
    await expect(projection.catchUp(200)).rejects.toThrow('unreachable');
    await projection.stop();
  });
});
