import { conflict, unavailable } from '@wagw/lib';
import { FactRecorder } from './factRecorder';
import { testLogger } from '../../../../test/harness/logger';

/** A store that is unavailable for its first `failures` appends, then stores. */
const flakyStore = (failures: number) => {
  const stored: string[] = [];
  let calls = 0;
  return {
    stored,
    append: (fact: string) => async (): Promise<void> => {
      calls++;
      if (calls <= failures) throw unavailable('event_store_unavailable', 'NATS is electing');
      stored.push(fact);
    },
  };
};

const options = { retryForMs: 60_000, firstDelayMs: 1, maxDelayMs: 4 };

describe('fact recorder', () => {
  it('records an instance facts in the order reported, retrying through an outage', async () => {
    const store = flakyStore(5);
    const recorder = new FactRecorder(testLogger(), options);
    for (const fact of ['connecting', 'connected', 'sent', 'delivered']) recorder.record('I1', fact, store.append(fact));
    await recorder.idle();
    expect(store.stored).toEqual(['connecting', 'connected', 'sent', 'delivered']);
  });

  it('keeps other instances going while one retries', async () => {
    const stored: string[] = [];
    let blocked = true;
    const recorder = new FactRecorder(testLogger(), options);
    recorder.record('SLOW', 'slow', async () => {
      if (blocked) throw unavailable('event_store_unavailable', 'down');
      stored.push('slow');
    });
    recorder.record('FAST', 'fast', async () => void stored.push('fast'));
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(stored).toEqual(['fast']);
    blocked = false;
    await recorder.idle();
    expect(stored).toEqual(['fast', 'slow']);
  });

  it('gives a fact up after its retry window, and does not retry an error that would repeat', async () => {
    let attempts = 0;
    const recorder = new FactRecorder(testLogger(), { retryForMs: 30, firstDelayMs: 5, maxDelayMs: 5 });
    recorder.record('I2', 'never', async () => {
      attempts++;
      throw unavailable('event_store_unavailable', 'down for good');
    });
    let refused = 0;
    recorder.record('I3', 'refused', async () => {
      refused++;
      throw conflict('version_conflict', 'no');
    });
    await recorder.idle();
    expect(attempts).toBeGreaterThan(1);
    expect(attempts).toBeLessThan(10);
    expect(refused).toBe(1);
  });
});
