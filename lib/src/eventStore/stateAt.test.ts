import { asCurrentEvent, stateAt, type Decider } from './commandHandler';
import type { Commit, NewEvent } from './port';

/** A counter: each `Added` event adds its amount. */
type Added = NewEvent & { type: 'Added'; data: { n: number } };
const counter: Decider<never, Added, number> = {
  decide: () => [],
  evolve: (state, event) => state + event.data.n,
  initialState: () => 0,
  upcast: (event) => asCurrentEvent<Added>(event),
};

const commit = (sequence: number, ...times: string[]): Commit => ({
  stream: 'S.counter',
  sequence,
  commandId: `c${sequence}`,
  events: times.map((occurredAt) => ({ type: 'Added', schemaVersion: 1, occurredAt, data: { n: 1 }, stream: 'S.counter', sequence })),
});

describe('stateAt (an aggregate as it was at a moment)', () => {
  const log = [commit(3, '2026-11-23T10:00:00Z'), commit(7, '2026-11-23T10:01:00Z', '2026-11-23T10:02:00Z'), commit(9, '2026-11-23T10:03:00Z')];

  it('folds the commits up to the moment, with the version of the last one folded', () => {
    expect(stateAt(counter, log, new Date('2026-11-23T09:59:59Z'))).toEqual({ state: 0, version: 0 });
    expect(stateAt(counter, log, new Date('2026-11-23T10:00:00Z'))).toEqual({ state: 1, version: 3 });
    expect(stateAt(counter, log, new Date('2026-11-23T10:02:30Z'))).toEqual({ state: 3, version: 7 });
    expect(stateAt(counter, log, new Date('2030-01-01T00:00:00Z'))).toEqual({ state: 4, version: 9 });
  });

  it('never folds half a commit, and stops at the first later commit even if an even later one looks earlier (log order wins)', () => {
    expect(stateAt(counter, log, new Date('2026-11-23T10:01:30Z'))).toEqual({ state: 1, version: 3 });
    const skewed = [commit(1, '2026-11-23T10:00:00Z'), commit(2, '2026-11-23T10:05:00Z'), commit(3, '2026-11-23T10:01:00Z')];
    expect(stateAt(counter, skewed, new Date('2026-11-23T10:02:00Z'))).toEqual({ state: 1, version: 1 });
  });
});
