import { createInbox, headers, type Msg, type NatsConnection, type Subscription } from '@nats-io/transport-node';
import { decodeCommit, encodeCommit, TurnBatcher, type Delivery } from '@wagw/lib';
import { workSubject } from './membership';

/** Publishes made in one event-loop turn go out in one socket write (one write per message measured 12 % of CPU). */
const batchedWrites = (): TurnBatcher<() => void> =>
  new TurnBatcher<() => void>((writes) => {
    for (const write of writes) {
      try {
        write();
      } catch {
        // The connection closed meanwhile: a forward ends as lost (see send); a missed answer ends as lost on the
        // forwarding side, which then hands the work on.
      }
    }
  });

/**
 * How a replica finished a forwarded event: acked, handed back (with a delay), lost with a replica that left, or
 * unreachable: nobody listens on the replica's subject any more (NATS answered "no responders"), so it is gone.
 */
export type WorkOutcome = { kind: 'ack' } | { kind: 'nak'; delayMs: number } | { kind: 'lost' } | { kind: 'unreachable' };

interface Pending {
  member: string;
  settle: (outcome: WorkOutcome) => void;
  deadline: number;
}

const parseOutcome = (msg: Msg): WorkOutcome => {
  if (msg.headers?.hasError) return msg.headers.code === 503 ? { kind: 'unreachable' } : { kind: 'lost' };
  const text = msg.string();
  if (text === 'ack') return { kind: 'ack' };
  const delay = Number(text.startsWith('nak:') ? text.slice(4) : Number.NaN);
  return { kind: 'nak', delayMs: Number.isFinite(delay) && delay >= 0 ? delay : 0 };
};

/**
 * Forwards events to the replica that works on their instance, over core NATS (in order: one publisher, one
 * subscriber), and learns how each ended from the reply. Replies come back on one wildcard inbox subscription.
 * Core NATS delivers at most once: a request or reply lost (a reconnect) ends as `lost` after `timeoutMs`, so its
 * event goes back to JetStream instead of being kept in progress forever.
 */
export class WorkSender {
  private readonly inbox = createInbox();
  private readonly pending = new Map<number, Pending>();
  private readonly subscription: Subscription;
  private readonly writes = batchedWrites();
  private readonly sweeper: NodeJS.Timeout;
  private next = 0;

  constructor(
    private readonly nc: NatsConnection,
    private readonly timeoutMs: number,
  ) {
    this.sweeper = setInterval(() => this.expire(), Math.min(1_000, Math.max(50, Math.floor(timeoutMs / 4))));
    this.sweeper.unref();
    this.subscription = nc.subscribe(`${this.inbox}.*`, {
      callback: (error, msg) => {
        if (error) return;
        const id = Number(msg.subject.slice(this.inbox.length + 1));
        const waiting = this.pending.get(id);
        if (!waiting) return;
        this.pending.delete(id);
        waiting.settle(parseOutcome(msg));
      },
    });
  }

  send(member: string, delivery: Delivery): Promise<WorkOutcome> {
    const { commit } = delivery;
    const h = headers();
    h.set('Wagw-Stream', commit.stream);
    h.set('Wagw-Sequence', String(commit.sequence));
    h.set('Wagw-Command', commit.commandId);
    h.set('Wagw-Count', String(delivery.deliveryCount));
    const id = ++this.next;
    const body = encodeCommit(commit.events);
    return new Promise<WorkOutcome>((settle) => {
      this.pending.set(id, { member, settle, deadline: performance.now() + this.timeoutMs });
      this.writes.push(() => {
        try {
          this.nc.publish(workSubject(member), body, { reply: `${this.inbox}.${id}`, headers: h });
        } catch (error) {
          this.pending.delete(id);
          settle({ kind: 'lost' });
          throw error;
        }
      });
    });
  }

  /** Everything still waiting on `member` (which is gone) ends as lost. */
  abandon(member: string): void {
    for (const [id, waiting] of this.pending) {
      if (waiting.member !== member) continue;
      this.pending.delete(id);
      waiting.settle({ kind: 'lost' });
    }
  }

  close(): void {
    clearInterval(this.sweeper);
    this.subscription.unsubscribe();
    for (const waiting of this.pending.values()) waiting.settle({ kind: 'lost' });
    this.pending.clear();
  }

  /** Forwards with no answer in time end as lost (deadlines grow in insertion order: stop at the first to come). */
  private expire(): void {
    const now = performance.now();
    for (const [id, waiting] of this.pending) {
      if (waiting.deadline > now) break;
      this.pending.delete(id);
      waiting.settle({ kind: 'lost' });
    }
  }
}

/** A forwarded event as a delivery: acking or nakking it answers the replica that forwarded it (once). */
const forwardedDelivery = (msg: Msg, writes: TurnBatcher<() => void>): Delivery | null => {
  const stream = msg.headers?.get('Wagw-Stream');
  const sequence = Number(msg.headers?.get('Wagw-Sequence'));
  if (!stream || !Number.isSafeInteger(sequence)) return null;
  const commit = decodeCommit(stream, sequence, msg.headers?.get('Wagw-Command') ?? '', msg.string());
  let answered = false;
  const answer = (text: string): void => {
    if (answered) return;
    answered = true;
    writes.push(() => void msg.respond(text));
  };
  return {
    commit,
    deliveryCount: Number(msg.headers?.get('Wagw-Count')) || 1,
    ack: () => answer('ack'),
    nak: (delayMs?: number) => answer(`nak:${delayMs ?? 0}`),
    // The forwarding replica keeps the original in progress while this one is alive.
    inProgress: () => undefined,
  };
};

/** Receives the events forwarded to this replica and hands each to `handle`. */
export const serveWork = (nc: NatsConnection, member: string, handle: (delivery: Delivery) => void): Subscription => {
  const writes = batchedWrites();
  return nc.subscribe(workSubject(member), {
    callback: (error, msg) => {
      if (error) return;
      try {
        const delivery = forwardedDelivery(msg, writes);
        if (delivery) handle(delivery);
        else msg.respond('nak:1000');
      } catch {
        // An undecodable message: handed back, so the original is delivered again.
        msg.respond('nak:1000');
      }
    },
  });
};
