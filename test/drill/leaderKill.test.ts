import { recoveryFailures } from './leaderKill';

describe('what the drill holds against the gateway after the EVENTS leader kill', () => {
  it('passes sends accepted again within 10 s, however long the election looked', () => {
    expect(recoveryFailures({ acceptedAgainMs: 4_700, streamAnsweredMs: 4_600 })).toEqual([]);
    expect(recoveryFailures({ acceptedAgainMs: 9_900, streamAnsweredMs: 2_000 })).toEqual([]);
  });

  it('fails sends never accepted again', () => {
    expect(recoveryFailures({ acceptedAgainMs: null, streamAnsweredMs: 5_000 })).toEqual(['sends were never accepted again after the leader kill']);
  });

  it('past 10 s, passes what followed a slow election promptly (nats-server elects in 4-9 s, more when a campaign fails)', () => {
    expect(recoveryFailures({ acceptedAgainMs: 13_948, streamAnsweredMs: 13_700 })).toEqual([]);
    expect(recoveryFailures({ acceptedAgainMs: 14_000, streamAnsweredMs: 11_000 })).toEqual([]);
  });

  it('past 10 s, fails a gateway slower than 3 s after the new leader answered, or a stream that never answered', () => {
    expect(recoveryFailures({ acceptedAgainMs: 12_000, streamAnsweredMs: 5_000 })).toEqual([
      "sends were accepted again 12000 ms after the leader kill (at most 10000), 7000 ms after the EVENTS stream's new leader answered (at most 3000)",
    ]);
    expect(recoveryFailures({ acceptedAgainMs: 10_001, streamAnsweredMs: null })).toEqual([
      'sends were accepted again 10001 ms after the leader kill (at most 10000)',
    ]);
  });
});
