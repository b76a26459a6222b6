import { headers, type Msg, type NatsConnection, type Subscription } from '@nats-io/transport-node';
import { batchedWrites, decodeCommit, encodeCommit, ReplyInbox, SUBJECTS, type Delivery, type TurnBatcher } from '@wagw/lib';

/**
 * How a replica finished a forwarded event: acked, handed back (with a delay), lost with a replica that left, or
 * unreachable: nobody listens on the replica's subject any more (NATS answered "no responders"), so it is gone.
 */
export type WorkOutcome = { kind: 'ack' } | { kind: 'nak'; delayMs: number } | { kind: 'lost' } | { kind: 'unreachable' };

const parseOutcome = (msg: Msg): WorkOutcome => {
  if (msg.headers?.hasError) return msg.headers.code === 503 ? { kind: 'unreachable' } : { kind: 'lost' };
  const text = msg.string();
  if (text === 'ack') return { kind: 'ack' };
  const delay = Number(text.startsWith('nak:') ? text.slice(4) : Number.NaN);
  return { kind: 'nak', delayMs: Number.isFinite(delay) && delay >= 0 ? delay : 0 };
};

/**
 * Whether the instance came to the replica with this event (it worked on none of the instance's events just before):
 * what the replica holds in memory of the instance may be stale, so it reads the instance's handover marker
 * (`worker/slowInstances.ts`). Always sent, `1` or `0`: a replica of an earlier release sends none, and its absence
 * counts as `1`, never as "known here".
 */
const ARRIVED_HEADER = 'Wagw-Arrived';

/**
 * Forwards events to the replica that works on their instance, over core NATS (in order: one publisher, one
 * subscriber), and learns how each ended from the reply. Core NATS delivers at most once: a forward or answer lost
 * (a reconnect) ends as `lost` after the inbox's time-out, so its event goes back to JetStream instead of being
 * kept in progress forever.
 */
export class WorkSender {
  private readonly inbox: ReplyInbox;
  private readonly writes = batchedWrites();

  constructor(
    private readonly nc: NatsConnection,
    timeoutMs: number,
  ) {
    this.inbox = new ReplyInbox(nc, timeoutMs);
  }

  /**
   * Forwards `delivery` to `member`; `timeoutMs` (default: the sender's) is how long its answer may take. `arrived`:
   * the first of its instance's events that `member` works on since the instance came to it (see `ARRIVED_HEADER`).
   */
  async send(member: string, delivery: Delivery, arrived: boolean, timeoutMs?: number): Promise<WorkOutcome> {
    const { commit } = delivery;
    const h = headers();
    h.set(ARRIVED_HEADER, arrived ? '1' : '0');
    h.set('Wagw-Stream', commit.stream);
    h.set('Wagw-Sequence', String(commit.sequence));
    h.set('Wagw-Command', commit.commandId);
    h.set('Wagw-Count', String(delivery.deliveryCount));
    const body = encodeCommit(commit.events);
    const reply = await this.inbox.request(
      (subject, fail) =>
        this.writes.push(() => {
          try {
            this.nc.publish(SUBJECTS.webhooksWork(member), body, { reply: subject, headers: h });
          } catch {
            fail();
          }
        }),
      member,
      timeoutMs,
    );
    return reply ? parseOutcome(reply) : { kind: 'lost' };
  }

  /** Everything still waiting ends as lost: the connection dropped, so no answer can come. */
  abandonAll(): void {
    this.inbox.abandonAll();
  }

  /** Everything still waiting on `member` (which is gone) ends as lost. */
  abandon(member: string): void {
    this.inbox.abandon(member);
  }

  close(): void {
    this.inbox.close();
  }
}

/** A forwarded event as a delivery: acking or nakking it answers the replica that forwarded it (once). */
const forwardedDelivery = (msg: Msg, writes: TurnBatcher<() => void>): { delivery: Delivery; arrived: boolean } | null => {
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
  const delivery: Delivery = {
    commit,
    deliveryCount: Number(msg.headers?.get('Wagw-Count')) || 1,
    ack: () => answer('ack'),
    nak: (delayMs?: number) => answer(`nak:${delayMs ?? 0}`),
    // The forwarding replica keeps the original in progress while this one is alive.
    inProgress: () => undefined,
  };
  return { delivery, arrived: msg.headers?.get(ARRIVED_HEADER) !== '0' };
};

/** Receives the events forwarded to this replica and hands each to `handle` (`arrived`: see `ARRIVED_HEADER`). */
export const serveWork = (nc: NatsConnection, member: string, handle: (delivery: Delivery, arrived: boolean) => void): Subscription => {
  const writes = batchedWrites();
  return nc.subscribe(SUBJECTS.webhooksWork(member), {
    callback: (error, msg) => {
      if (error) return;
      try {
        const work = forwardedDelivery(msg, writes);
        if (work) handle(work.delivery, work.arrived);
        else msg.respond('nak:1000');
      } catch {
        // An undecodable message: handed back, so the original is delivered again.
        msg.respond('nak:1000');
      }
    },
  });
};
