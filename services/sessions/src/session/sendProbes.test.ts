import { SendProbes } from './sendProbes';

describe('which sends probe a restriction', () => {
  it('counts the sends handed over after the report, each once, until the restriction is over', () => {
    const probes = new SendProbes();
    probes.handed('I1', 'before', false);
    probes.handed('I1', 'refused', false);
    probes.clear('I1');
    probes.handed('I1', 'after', true);
    expect(probes.settle('I1', 'before')).toBe(false);
    expect(probes.settle('I1', 'refused')).toBe(false);
    expect(probes.settle('I1', 'after')).toBe(true);
    expect(probes.settle('I1', 'after')).toBe(false);
    expect(probes.settle('I1', 'never-handed')).toBe(false);
    expect(probes.settle('I2', 'after')).toBe(false);

    probes.handed('I1', 'late', true);
    probes.clear('I1');
    expect(probes.settle('I1', 'late')).toBe(false);
  });

  it('counts, for a restriction known from the log, the sends handed over while it is known', () => {
    const probes = new SendProbes();
    probes.handed('I1', 'free', false);
    probes.handed('I1', 'probe', true);
    probes.handed('I1', 'next', true);
    // Reported again (a refusal, a new end): the sends handed so far are no probes of it.
    probes.clear('I1');
    expect(probes.settle('I1', 'free')).toBe(false);
    expect(probes.settle('I1', 'probe')).toBe(false);
    probes.handed('I1', 'after-report', true);
    expect(probes.settle('I1', 'after-report')).toBe(true);
    // Known no more (its end passed): no probe, and a restriction known later starts its own count.
    probes.handed('I1', 'unrestricted', false);
    probes.handed('I1', 'again', true);
    expect(probes.settle('I1', 'unrestricted')).toBe(false);
    expect(probes.settle('I1', 'again')).toBe(true);
  });

  it('forgets the oldest sends whose outcome never came, and a reset instance', () => {
    const probes = new SendProbes();
    probes.clear('I1');
    for (let i = 0; i <= 1_000; i++) probes.handed('I1', `m${i}`, true);
    expect(probes.settle('I1', 'm0')).toBe(false);
    expect(probes.settle('I1', 'm1')).toBe(true);
    probes.clear('I1');
    expect(probes.settle('I1', 'm2')).toBe(false);
  });
});
