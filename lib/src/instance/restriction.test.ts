import { DeciderSpecification } from '../eventStore';
import { instanceEvent } from '../events';
import type { ConnectionFact } from './commands';
import { evolveInstance, instanceDecider } from './decider';
import { activeRestriction, initialInstanceState, type ExistingInstance, type InstanceState } from './state';

const NOW = '2026-11-23T10:00:00.000Z';
const LATER = '2026-11-23T11:00:00.000Z';
const UNTIL = '2026-11-23T12:00:00.000Z';
const PAST = '2026-11-23T10:30:00.000Z';

const given = DeciderSpecification.for(instanceDecider);
const created = instanceEvent('InstanceCreated', NOW, { instance_id: 'I1', account: 'acme' });
const restricted = (until: string | null, at = NOW) => instanceEvent('InstanceRestricted', at, { until });
const lifted = instanceEvent('InstanceRestrictionLifted', NOW, {});

/** A fact reported at LATER by a connection of the current reset count. */
const fact = (f: ConnectionFact) => ({ type: 'RecordConnectionFact' as const, fact: f, resets: 0, now: LATER });

const fold = (...events: Parameters<typeof evolveInstance>[1][]): ExistingInstance => {
  const state = events.reduce<InstanceState>(evolveInstance, initialInstanceState());
  if (!state.exists) throw new Error('no instance');
  return state;
};

describe('Instance aggregate: restrictions WhatsApp puts on the account', () => {
  it('records a restriction once while it holds, however many refused sends report it', () => {
    given(created)
      .when(fact({ type: 'restricted', until: null }))
      .then([instanceEvent('InstanceRestricted', LATER, { until: null })]);
    given(created, restricted(null))
      .when(fact({ type: 'restricted', until: null }))
      .then([]);
    given(created, restricted(UNTIL))
      .when(fact({ type: 'restricted', until: null }))
      .then([]);
    given(created, restricted(UNTIL))
      .when(fact({ type: 'restricted', until: UNTIL }))
      .then([]);
  });

  it('records a new end WhatsApp names, and a restriction again once the last one ran out', () => {
    given(created, restricted(null))
      .when(fact({ type: 'restricted', until: UNTIL }))
      .then([instanceEvent('InstanceRestricted', LATER, { until: UNTIL })]);
    given(created, restricted(PAST))
      .when(fact({ type: 'restricted', until: null }))
      .then([instanceEvent('InstanceRestricted', LATER, { until: null })]);
  });

  it('records a lifting only while a restriction holds', () => {
    given(created, restricted(null))
      .when(fact({ type: 'unrestricted' }))
      .then([instanceEvent('InstanceRestrictionLifted', LATER, {})]);
    given(created)
      .when(fact({ type: 'unrestricted' }))
      .then([]);
    given(created, restricted(null), lifted)
      .when(fact({ type: 'unrestricted' }))
      .then([]);
    given(created, restricted(PAST))
      .when(fact({ type: 'unrestricted' }))
      .then([]);
  });

  it('records nothing from a connection started before a reset', () => {
    given(created, instanceEvent('InstanceReset', NOW, {}))
      .when({ ...fact({ type: 'restricted', until: null }), resets: 0 })
      .then([]);
  });

  it('keeps when a restriction began through a new end, holds it until its end, and forgets it on lifting and reset', () => {
    const state = fold(created, restricted(null, NOW), restricted(UNTIL, LATER));
    expect(state.restriction).toEqual({ since: NOW, until: UNTIL });
    expect(activeRestriction(state, Date.parse(LATER))).toEqual({ since: NOW, until: UNTIL });
    expect(activeRestriction(state, Date.parse(UNTIL))).toBeNull();
    // A restriction after one that ran out begins anew.
    expect(fold(created, restricted(PAST, NOW), restricted(null, LATER)).restriction).toEqual({ since: LATER, until: null });
    expect(fold(created, restricted(null), lifted).restriction).toBeNull();
    expect(fold(created, restricted(null), instanceEvent('InstanceReset', LATER, {})).restriction).toBeNull();
  });

  it("ends a restriction with the link: a logout, or a link to another number, leaves the next link's sends free", () => {
    const linked = (number: string) => instanceEvent('InstanceLinked', LATER, { number });
    const loggedOut = instanceEvent('InstanceLoggedOut', LATER, { reason: 'logged_out_on_phone' });
    const connected = instanceEvent('InstanceConnected', LATER, {});
    for (const until of [null, UNTIL]) {
      const onA = [created, linked('A'), connected, restricted(until)] as const;
      expect(fold(...onA, loggedOut).restriction).toBeNull();
      expect(fold(...onA, loggedOut, linked('B'), connected).restriction).toBeNull();
      // The same number linked again after the logout starts with none known: WhatsApp reports it again if it holds.
      expect(fold(...onA, loggedOut, linked('A'), connected).restriction).toBeNull();
      // Linked to another number without a logout seen in between: A's restriction is not B's.
      expect(fold(...onA, linked('B'), connected).restriction).toBeNull();
      // A reconnect of the same link keeps it.
      expect(fold(...onA, instanceEvent('InstanceDisconnected', LATER, { reason: 'connection_lost', reconnecting: true }), connected).restriction).toEqual({
        since: NOW,
        until,
      });
    }
    // B's first refused send records its own restriction; a lifting reported for A's records nothing.
    given(created, linked('A'), restricted(null), loggedOut, linked('B'), connected)
      .when(fact({ type: 'restricted', until: null }))
      .then([instanceEvent('InstanceRestricted', LATER, { until: null })]);
    given(created, linked('A'), restricted(null), loggedOut, linked('B'), connected)
      .when(fact({ type: 'unrestricted' }))
      .then([]);
  });
});
