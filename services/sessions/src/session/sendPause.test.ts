import { instanceEvent, evolveInstance, initialInstanceState, type ExistingInstance, type InstanceState } from '@wagw/lib';
import { isSendPaused, restrictionOf } from './sendPause';

const T0 = Date.parse('2026-11-23T10:00:00.000Z');
const HOUR = 3_600_000;

const stateWith = (...events: Parameters<typeof evolveInstance>[1][]): ExistingInstance => {
  const state = [instanceEvent('InstanceCreated', '2026-11-23T09:00:00.000Z', { instance_id: 'I1', account: 'acme' }), ...events].reduce<InstanceState>(
    evolveInstance,
    initialInstanceState(),
  );
  if (!state.exists) throw new Error('no instance');
  return state;
};

describe('whether a restricted instance sends', () => {
  it('holds sends until the end WhatsApp named', () => {
    const restriction = { since: T0, until: T0 + 10_000 };
    expect(isSendPaused(restriction, T0 + 9_999, HOUR)).toBe(true);
    expect(isSendPaused(restriction, T0 + 10_000, HOUR)).toBe(false);
  });

  it('holds sends for the pause when the end is unknown, then lets one probe', () => {
    const restriction = { since: T0, until: null };
    expect(isSendPaused(restriction, T0 + HOUR - 1, HOUR)).toBe(true);
    expect(isSendPaused(restriction, T0 + HOUR, HOUR)).toBe(false);
  });

  it('sends when no restriction is known', () => {
    expect(isSendPaused(null, T0, HOUR)).toBe(false);
  });

  it('reads the restriction recorded in the log while it holds', () => {
    const restricted = stateWith(instanceEvent('InstanceRestricted', new Date(T0).toISOString(), { until: new Date(T0 + 60_000).toISOString() }));
    expect(restrictionOf(restricted, T0 + 1_000)).toEqual({ since: T0, until: T0 + 60_000 });
    expect(restrictionOf(restricted, T0 + 60_000)).toBeNull();
    const open = stateWith(instanceEvent('InstanceRestricted', new Date(T0).toISOString(), { until: null }));
    expect(restrictionOf(open, T0 + 5 * HOUR)).toEqual({ since: T0, until: null });
    expect(restrictionOf(stateWith(), T0)).toBeNull();
    expect(restrictionOf(undefined, T0)).toBeNull();
  });
});
