import { DURABLES, Gauge, instanceIdOf, WEBHOOK_DOMAIN_TYPES, type Delivery, type EventStore, type Logger, type Ownership, type Subscription } from '@wagw/lib';
import { heartbeatMs } from '../worker/heartbeat';
import { LastReplicas, routeEvent } from './assignment';
import type { Membership } from './membership';
import type { WorkOutcome, WorkSender } from './workChannel';

/** The key of the sequencer's lease: one replica at a time reads the event stream for first attempts. */
const SEQUENCER_LEASE = 'sequencer';

/**
 * Events handed out and not yet answered, over all instances (`maxAckPending`). A lane waits for an attempt a few
 * seconds at most (`WEBHOOK_SLOW_AFTER_MS`, or at once when 1,000 events pile up behind it): then the router hands it
 * and the instance's next events to the deliverer, recorded and acked. Before, a lane held up to 1,000 events for a
 * 15 s time-out each, so twenty instances whose endpoints hang stopped every instance's first attempts (for 75 s,
 * until their circuits opened). Each held event costs this replica about its JSON.
 */
const MAX_EVENTS_IN_FLIGHT = 20_000;

const leading = new Gauge({ name: 'webhook_sequencer_leader', help: '1 while this replica reads the event stream and assigns instances to replicas' });

/** What the sequencer needs of its collaborators (narrow, so tests can stand in for them). */
export type SequencerLease = Pick<Ownership, 'start' | 'stop' | 'acquire' | 'owns' | 'onLost' | 'onFreed'>;
export type SequencerMembers = Pick<Membership, 'self' | 'usable' | 'unreachable' | 'onGone'>;
export type SequencerSender = Pick<WorkSender, 'send' | 'abandon'>;

export interface SequencerOptions {
  ackWaitMs: number;
  batch: number;
  /** How often a replica that does not lead tries to take the lead (a dead leader's lease must expire first). */
  claimEveryMs: number;
  /** How long a clean shutdown waits for the work it handed to other replicas. */
  drainTimeoutMs: number;
  /** Events handed out and not yet answered, over all instances (default `MAX_EVENTS_IN_FLIGHT`; tests scale it down). */
  maxInFlight?: number;
}

/** One hand-out of a delivery to a replica; a delivery handed out again after its replica was lost is a new one. */
interface Work {
  delivery: Delivery;
  local: boolean;
  /** The first event its replica works on since the instance came to it (LastReplicas); kept when forwarded again. */
  arrived: boolean;
  /** How often it was forwarded again for an answer that came late (each wait for an answer doubles). */
  forwards?: number;
}

/** The longest wait for a replica's answer to a forward made again: a truly lost one is made again at least this often. */
const MAX_FORWARD_WAIT_MS = 5 * 60_000;

/** An instance's events in the hands of one replica (in event order), and those waiting for it to finish. */
interface InstanceState {
  replica: string;
  inFlight: Work[];
  held: Delivery[];
}

/** The same delivery, marked as delivered again: whoever works on it first checks whether it was handled already. */
const again = (delivery: Delivery): Delivery => ({
  commit: delivery.commit,
  deliveryCount: delivery.deliveryCount + 1,
  ack: () => delivery.ack(),
  nak: (delayMs?: number) => delivery.nak(delayMs),
  inProgress: () => delivery.inProgress(),
});

/**
 * Keeps each instance's webhooks in event order while N replicas share the work. One replica at a time (the holder
 * of a lease) reads the domain events from the durable consumer and hands each instance's events to one replica
 * (rendezvous hashing over the live replicas), itself included. An instance moves to another replica only when
 * none of its events is being worked on (later ones are held meanwhile), so two replicas never work on one
 * instance's events at once. The original message stays unacked (kept in progress) until the replica working on it
 * answers; when a replica is gone, its events go to another one at once, in order. When the leader dies, another
 * takes the lease and JetStream redelivers what was unacked after the ack wait. An instance's first event on a
 * replica is marked (`arrived`, see `LastReplicas`): only then does the replica read the instance's handover marker.
 */
export class Sequencer {
  private subscription: Subscription | null = null;
  /** The read loop of the current subscription: it ends after the messages already fetched have been handed out. */
  private reading: Promise<void> = Promise.resolve();
  private claiming: Promise<void> | null = null;
  private readonly instances = new Map<string, InstanceState>();
  private readonly lastReplicas = new LastReplicas();
  private readonly unfinished = new Set<Work>();
  private readonly waiting = new Set<Delivery>();
  private claimTimer: NodeJS.Timeout | null = null;
  private heartbeat: NodeJS.Timeout | null = null;
  private stopped = false;

  constructor(
    private readonly events: Pick<EventStore, 'subscribe'>,
    private readonly lease: SequencerLease,
    private readonly membership: SequencerMembers,
    private readonly sender: SequencerSender,
    private readonly local: (instanceId: string, delivery: Delivery, arrived: boolean) => void,
    private readonly logger: Logger,
    private readonly options: SequencerOptions,
  ) {}

  async start(): Promise<void> {
    this.lease.onLost(() => void this.stepDown('the sequencer lease was lost'));
    this.lease.onFreed(() => void this.claim());
    this.membership.onGone((member) => this.reassign(member));
    await this.lease.start();
    this.claimTimer = setInterval(() => void this.claim(), this.options.claimEveryMs);
    this.claimTimer.unref();
    this.heartbeat = setInterval(() => {
      this.unfinished.forEach((work) => work.delivery.inProgress());
      this.waiting.forEach((delivery) => delivery.inProgress());
    }, heartbeatMs(this.options.ackWaitMs));
    this.heartbeat.unref();
    await this.claim();
  }

  /**
   * Stops reading and hands the lease over once the events already read are handed out and what other replicas
   * hold is answered (bounded; the rest goes back to JetStream). Work on this replica itself keeps being kept in
   * progress until `close()`, after the replica's own lanes are idle.
   */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.claimTimer) clearInterval(this.claimTimer);
    await this.claiming;
    await this.subscription?.close();
    // Messages fetched before the close are still handed out (to the other replicas: this one drains).
    await this.reading;
    this.subscription = null;
    leading.set(0);
    const elsewhere = (): number => [...this.unfinished].filter((work) => !work.local).length + this.waiting.size;
    const deadline = Date.now() + this.options.drainTimeoutMs;
    while (elsewhere() > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    for (const work of [...this.unfinished].filter((w) => !w.local)) this.settle(work, { kind: 'lost' });
    this.releaseHeld();
    await this.lease.stop();
  }

  /** Stops keeping work in progress (call once this replica's lanes are idle). */
  close(): void {
    if (this.heartbeat) clearInterval(this.heartbeat);
  }

  private claim(): Promise<void> {
    this.claiming ??= this.tryToLead().finally(() => {
      this.claiming = null;
    });
    return this.claiming;
  }

  private async tryToLead(): Promise<void> {
    if (this.stopped || this.subscription) return;
    try {
      if (!(await this.lease.acquire(SEQUENCER_LEASE))) return;
      // Events that make no webhook (MessageAccepted: one per send) are acked by the store, never opened or routed.
      const subscription = await this.events.subscribe('>', {
        durableName: DURABLES.webhooksRouter,
        ackWaitMs: this.options.ackWaitMs,
        batch: this.options.batch,
        maxAckPending: this.options.maxInFlight ?? MAX_EVENTS_IN_FLIGHT,
        types: WEBHOOK_DOMAIN_TYPES,
      });
      // The lease may have been lost, or a shutdown begun, while subscribing.
      if (this.stopped || !this.lease.owns(SEQUENCER_LEASE)) {
        await subscription.close();
        return;
      }
      this.subscription = subscription;
      // Led before: another leader may have moved instances since, unknown here.
      this.lastReplicas.clear();
      leading.set(1);
      this.logger.info({ member: this.membership.self }, 'leading the webhooks sequencer');
      this.reading = this.read(subscription);
    } catch (error) {
      this.logger.warn({ err: error }, 'taking the sequencer lease failed; retrying');
    }
  }

  private async stepDown(why: string): Promise<void> {
    const subscription = this.subscription;
    if (!subscription) return;
    this.subscription = null;
    leading.set(0);
    this.logger.warn({ why }, 'no longer leading the webhooks sequencer');
    // Work handed out still ends (and is acked) normally. Held events go back to JetStream for the new leader, who
    // sends later events at once: holding on to them here would put them behind those.
    this.releaseHeld();
    await subscription.close();
  }

  private releaseHeld(): void {
    for (const state of this.instances.values()) state.held.splice(0);
    for (const delivery of this.waiting) delivery.nak();
    this.waiting.clear();
  }

  private async read(subscription: Subscription): Promise<void> {
    try {
      for await (const delivery of subscription) {
        // Stepped down (lease lost): what is still read goes back to JetStream for the new leader.
        if (this.subscription !== subscription) delivery.nak();
        else this.dispatch(delivery);
      }
    } catch (error) {
      this.logger.error({ err: error }, 'sequencer subscription ended');
      if (this.subscription === subscription) await this.stepDown('its subscription ended');
    }
  }

  private dispatch(delivery: Delivery): void {
    const instanceId = instanceIdOf(delivery.commit.stream);
    const current = this.instances.get(instanceId);
    const work = current && { replica: current.replica, outstanding: current.inFlight.length, held: current.held.length };
    const route = routeEvent(instanceId, work, this.membership.usable(), this.membership.self);
    if (route.kind === 'hold') {
      current!.held.push(delivery);
      this.waiting.add(delivery);
      return;
    }
    // An instance with work in flight keeps its state (and replica); otherwise it starts afresh.
    const state = current ?? { replica: route.replica, inFlight: [], held: [] };
    this.instances.set(instanceId, state);
    const local = route.replica === this.membership.self;
    const handout: Work = { delivery, local, arrived: this.lastReplicas.arrives(instanceId, route.replica) };
    state.inFlight.push(handout);
    this.unfinished.add(handout);
    const finish = (outcome: WorkOutcome): void => this.finish(instanceId, state, handout, outcome);
    if (local) {
      const item: Delivery = {
        commit: delivery.commit,
        deliveryCount: delivery.deliveryCount,
        ack: () => finish({ kind: 'ack' }),
        nak: (delayMs?: number) => finish({ kind: 'nak', delayMs: delayMs ?? 0 }),
        inProgress: () => delivery.inProgress(),
      };
      this.local(instanceId, item, handout.arrived);
    } else {
      void this.sender.send(route.replica, delivery, handout.arrived).then(finish);
    }
  }

  private finish(instanceId: string, state: InstanceState, work: Work, outcome: WorkOutcome): void {
    if (!this.unfinished.has(work)) return;
    // The replica is gone: its work (this included) goes to another one, in order (see reassign).
    if (outcome.kind === 'unreachable') return this.membership.unreachable(state.replica);
    // No answer in time: the replica may still have it in its lane (a slow endpoint), or the forward was dropped.
    // Keep the instance there and forward it again: that replica's router answers the copy together with the event
    // still in its lane (router.ts `handle`), or works it if the first forward never arrived. Handing it back to
    // JetStream would free the instance for another replica at once.
    if (outcome.kind === 'lost' && !work.local && !this.stopped) {
      const copy = again(work.delivery);
      // Each wait doubles: an event behind a slow endpoint is forwarded again a few times, not once per ack wait.
      work.forwards = (work.forwards ?? 0) + 1;
      const waitMs = Math.min(MAX_FORWARD_WAIT_MS, this.options.ackWaitMs * 2 ** work.forwards);
      setTimeout(() => {
        if (!this.unfinished.has(work)) return;
        work.delivery = copy;
        void this.sender.send(state.replica, copy, work.arrived, waitMs).then((next) => this.finish(instanceId, state, work, next));
      }, 1_000).unref();
      return;
    }
    this.settle(work, outcome);
    state.inFlight.splice(state.inFlight.indexOf(work), 1);
    if (state.inFlight.length > 0 || this.instances.get(instanceId) !== state) return;
    this.instances.delete(instanceId);
    // Events held while the instance moved (or its replica drained) go to its new replica now, in their order.
    this.redispatch(state.held.splice(0));
  }

  private settle(work: Work, outcome: WorkOutcome): void {
    this.unfinished.delete(work);
    if (outcome.kind === 'ack') work.delivery.ack();
    else if (outcome.kind === 'nak') work.delivery.nak(outcome.delayMs);
    else work.delivery.nak();
  }

  /**
   * A replica is gone: the events it was working on (unacked, maybe half done) and those held for it go to other
   * replicas now, in their order, instead of waiting for JetStream to redeliver them after the ack wait. The ones it
   * had in hand count as delivered again, so a record of an attempt it made is found and no POST is repeated.
   */
  private reassign(member: string): void {
    for (const [instanceId, state] of this.instances) {
      if (state.replica !== member) continue;
      this.instances.delete(instanceId);
      state.inFlight.forEach((work) => this.unfinished.delete(work));
      this.redispatch([...state.inFlight.map((work) => again(work.delivery)), ...state.held]);
    }
    // Replies still awaited from it are void now (their deliveries were handed out again above).
    this.sender.abandon(member);
  }

  private redispatch(deliveries: Delivery[]): void {
    for (const delivery of deliveries) {
      this.waiting.delete(delivery);
      this.dispatch(delivery);
    }
  }
}
