import { Lanes } from './lanes';

const tick = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('lanes', () => {
  it('runs one key in order while other keys go ahead', async () => {
    const lanes = new Lanes(10);
    const log: string[] = [];
    lanes.push('slow', async () => {
      await tick(50);
      log.push('slow-1');
    });
    lanes.push('slow', async () => {
      log.push('slow-2');
    });
    lanes.push('fast', async () => {
      log.push('fast-1');
    });
    expect(lanes.size('slow')).toBe(2);
    await lanes.idle();
    expect(log).toEqual(['fast-1', 'slow-1', 'slow-2']);
    expect(lanes.total).toBe(0);
  });

  it('never runs more tasks at once than its concurrency', async () => {
    const lanes = new Lanes(2);
    let running = 0;
    let peak = 0;
    for (let i = 0; i < 6; i++) {
      lanes.push(`k${i}`, async () => {
        running++;
        peak = Math.max(peak, running);
        await tick(10);
        running--;
      });
    }
    await lanes.idle();
    expect(peak).toBe(2);
  });

  it('keeps going after a task fails', async () => {
    const lanes = new Lanes(1);
    const log: string[] = [];
    lanes.push('a', async () => {
      throw new Error('boom');
    });
    lanes.push('a', async () => {
      log.push('after');
    });
    await lanes.idle();
    expect(log).toEqual(['after']);
  });

  it('refuses a concurrency below 1, with which every task would wait forever', () => {
    expect(() => new Lanes(0)).toThrow('Lanes needs a concurrency of at least 1, got 0');
    expect(() => new Lanes(-1)).toThrow(RangeError);
    expect(() => new Lanes(Number.NaN)).toThrow(RangeError);
  });
});
