import { InMemoryEventStore, instanceIdFor } from '@wagw/lib';
import { receiverRig, type Sent } from '../../../../test/harness/webhooksWorkerRig';
import { eventually } from '../../../../test/harness/wait';
import { type Router } from './router';

// Application test of a replica leaving: the real router, attempter and delivery client on one in-memory store,
// delivering to a real HTTP receiver on 127.0.0.1. Forwarded events keep coming while the router finishes its work;
// an event taken after the router was found idle would be POSTed here while the leader, getting no answer, hands it
// to another replica too (a duplicate, seen with a replica stopped under load). Given a feed that hands the next
// event whenever the router looks idle, when the router finishes, then every event it took was worked on and
// answered before `finish` resolved, and none was taken after taking stopped.

const ID = instanceIdFor('acme', 'router-leaving');
const AT = '2026-11-23T10:00:00.000Z';
const EVENTS = 200;

describe('Router finishing while events are forwarded to it (application, real HTTP receiver)', () => {
  const rig = receiverRig({ instanceId: ID, store: () => new InMemoryEventStore(), pathPrefix: '/leaving' });
  let router: Router;

  beforeEach(async () => {
    await rig.givenInstance(AT);
    router = rig.routerWith();
  });

  /**
   * Hands the first event now and each next one on a later turn of the event loop, when the router has nothing in
   * hand (the moment a leaving replica is most exposed), until `taking()` says no or the events run out.
   */
  const feed = (events: Sent[], answers: string[], taking: () => boolean): { handed: number[]; done: Promise<void> } => {
    const handed: number[] = [];
    const done = new Promise<void>((resolve) => {
      const next = (): void => {
        const event = events[handed.length];
        if (!taking() || event === undefined) return resolve();
        if (handed.length === 0 || router.isIdle) {
          handed.push(event.commit.sequence);
          rig.handOut(router, [event.commit], answers);
        }
        setImmediate(next);
      };
      next();
    });
    return { handed, done };
  };

  it('answers every event it took before finish resolves, and takes none after', async () => {
    const events = await rig.sent(EVENTS);
    const answers: string[] = [];
    let taking = true;
    const fed = feed(events, answers, () => taking);
    // Let a few events go through first, so finishing starts with the feed running (counted, not timed: on a loaded
    // machine a late timer could let the feed hand out every event before finishing begins).
    await eventually(
      async () => fed.handed.length,
      (handed) => handed >= 5,
      5_000,
      1,
    );
    await router.finish(() => (taking = false));
    const answeredAtFinish = [...answers];
    await fed.done;

    expect(fed.handed.length).toBeGreaterThan(0);
    expect(fed.handed.length).toBeLessThan(EVENTS);
    expect(answeredAtFinish).toEqual(fed.handed.map((sequence) => `ack ${sequence}`));
    const posted = rig.receiver.received.filter((r) => r.path === rig.path).map((r) => r.id);
    expect(posted).toEqual(events.slice(0, fed.handed.length).map((e) => e.id));
  });
});
