import { instanceIdOf, type EventStore, type Logger, type MessageAccepted } from '@wagw/lib';
import type { InstanceRegistry } from '../registry/instanceRegistry';
import type { QueuedSend, SendQueue } from '../registry/sendLedger';
import type { LocalSends } from './localSends';
import { sendFailureOf } from './sendVerdict';

export interface SweeperParts {
  events: EventStore;
  queue: SendQueue;
  registry: InstanceRegistry;
  local: LocalSends;
  /** The instance's connection is here, connected, and its sends do not wait (a restricted account's do). */
  sendsHere: (instanceId: string) => boolean;
  /** Hands a send to this replica's lane of the instance, in queue order (it settles itself there). */
  send: (instanceId: string, accepted: MessageAccepted, sequence: number) => void;
  /** Sends of the instance in this replica's lane now (waiting or going out). */
  inLane: (instanceId: string) => number;
  /** Records that a send failed, with the reason. */
  fail: (instanceId: string, accepted: MessageAccepted, reason: string) => Promise<unknown>;
  /** Forgets what is kept about sends that are no longer queued (after each sweep). */
  forget: (stillQueued: (stream: string) => boolean) => void;
  logger: Logger;
  ttlMs: number;
  everyMs: number;
}

/** How long a queued send may read without its MessageAccepted before it is logged as an error. */
export const UNREADABLE_ALARM_MS = 60_000;

/** Queued sends read per sweep at most: a long queue goes out over several sweeps, in order. */
const READS_PER_SWEEP = 1_000;

/**
 * Sends of one instance handed to its lane at a time; the next are read as these go out (`refill`). A lane holds
 * sends while the pacing gap passes, so a whole queue handed at once would sit in memory for as many seconds as it
 * has sends, and each send accepted meanwhile would wait behind it.
 */
export const LANE_WINDOW = 4;

/**
 * Hands the send ledger's queued sends to the lanes of the dispatcher. Every `everyMs`, and at once when the ledger
 * shows a new send or one went out (`refill`), it reads the oldest queued sends of instances connected on this
 * replica into their lane, a few at a time (`LANE_WINDOW`); every `everyMs` it also fails the ones that can no longer
 * go out (reset, logged out, past the TTL) for instances this replica decides for (`decidesFor`: it holds their
 * lease, or nobody does and it holds the unheld-sends lease, `UnheldSendsDecider`).
 */
export class QueueSweeper {
  private timer: NodeJS.Timeout | null = null;
  private sweeping: Promise<void> | null = null;
  /** Instances whose next queued sends are being read now. */
  private readonly draining = new Set<string>();
  private decidesFor: (instanceId: string) => boolean = () => true;
  /** Queued sends read without their MessageAccepted, since when (forgotten once no longer queued). */
  private readonly unreadableSince = new Map<string, { since: number; alarmed: boolean }>();

  constructor(private readonly parts: SweeperParts) {}

  decideFor(predicate: (instanceId: string) => boolean): void {
    this.decidesFor = predicate;
  }

  start(): void {
    this.timer = setInterval(() => void this.sweep(), this.parts.everyMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.sweeping;
  }

  /** One pass over the instances with queued sends (one at a time: a pass still running is awaited). */
  sweep(): Promise<void> {
    this.sweeping ??= this.pass()
      .catch((error: unknown) => this.parts.logger.warn({ err: error }, 'sweeping the queued sends failed; the next sweep retries'))
      .finally(() => {
        this.sweeping = null;
      });
    return this.sweeping;
  }

  private async pass(): Promise<void> {
    const { queue, local } = this.parts;
    let budget = READS_PER_SWEEP;
    for (const instanceId of queue.instancesWithQueued()) {
      if (budget <= 0) break;
      if (this.parts.sendsHere(instanceId)) budget -= await this.drain(instanceId, budget);
      else if (this.decidesFor(instanceId)) budget -= await this.expire(instanceId, budget);
    }
    const stillQueued = (stream: string): boolean => queue.isQueued(instanceIdOf(stream), stream);
    const { again, leftAlone } = local.prune(stillQueued);
    for (const stream of again) {
      this.parts.logger.warn({ stream }, 'a send handed to the platform got no receipt in time (its connection may have dropped); sending it again');
    }
    for (const stream of leftAlone) {
      this.parts.logger.error({ stream }, 'a send handed to the platform again and again never got a receipt recorded; left queued until a restart');
    }
    this.parts.forget(stillQueued);
    for (const stream of this.unreadableSince.keys()) if (!stillQueued(stream)) this.unreadableSince.delete(stream);
  }

  /** A send of the instance went out here: the next queued ones, if any, take its place in the lane. */
  refill(instanceId: string): void {
    if (this.timer && this.parts.queue.queued(instanceId) > 0 && this.parts.sendsHere(instanceId)) {
      void this.drain(instanceId, LANE_WINDOW).catch((error: unknown) =>
        this.parts.logger.warn({ err: error, instanceId }, 'reading queued sends failed; the next sweep retries'),
      );
    }
  }

  /** Hands the instance's oldest queued sends to its lane, as many as it has room for; returns how many it read. */
  private async drain(instanceId: string, budget: number): Promise<number> {
    if (this.draining.has(instanceId)) return 0;
    this.draining.add(instanceId);
    try {
      let reads = 0;
      const read = new Set<string>();
      // Until the lane is full again: sends may go out while the next are read (a refill meanwhile finds this drain
      // under way and leaves it to it).
      for (;;) {
        const room = Math.min(budget - reads, LANE_WINDOW - this.parts.inLane(instanceId));
        const next: QueuedSend[] = [];
        for (const queued of this.parts.queue.queuedSends(instanceId)) {
          if (next.length >= room) break;
          if (!this.parts.local.busy(queued.stream) && !read.has(queued.stream)) next.push(queued);
        }
        if (next.length === 0) return reads;
        for (const queued of next) {
          read.add(queued.stream);
          reads += 1;
          const accepted = await this.acceptedOf(queued.stream);
          // The lane sends them one by one, paced; each settles itself.
          if (accepted) this.parts.send(instanceId, accepted, queued.sequence);
          else this.unreadable(queued.stream);
        }
      }
    } finally {
      this.draining.delete(instanceId);
    }
  }

  /** Fails the instance's queued sends that can no longer go out; returns how many it read. */
  private async expire(instanceId: string, budget: number): Promise<number> {
    const { queue, registry, local, ttlMs } = this.parts;
    const facts = registry.get(instanceId);
    const now = Date.now();
    // The oldest fails first on every ground (TTL, a reset, the instance blocked): if it may wait, all may. Only it
    // is looked at on a sweep that fails nothing, which is nearly every sweep of every waiting instance.
    const [oldest] = queue.queuedSends(instanceId);
    if (!oldest || !sendFailureOf(facts, oldest, now, ttlMs)) return 0;
    let reads = 0;
    // Copied: failing one takes it out of the ledger while this goes on.
    for (const send of [...queue.queuedSends(instanceId)]) {
      const reason = sendFailureOf(facts, send, now, ttlMs);
      if (reads >= budget || !reason) break;
      if (!local.take(send.stream)) continue;
      reads += 1;
      let settled = false;
      try {
        const accepted = await this.acceptedOf(send.stream);
        if (accepted) {
          await this.parts.fail(instanceId, accepted, reason);
          settled = true;
        }
      } finally {
        local.release(send.stream, settled);
      }
    }
    return reads;
  }

  /**
   * A queued send whose stream reads without its MessageAccepted cannot go out, and every later send of its instance
   * waits behind it. Seen in the compose drill for a moment on both replicas at once, 3 s after a restarted NATS node
   * rejoined (the next sweeps read them, and they went out): a warning the first time, an error once it lasted
   * UNREADABLE_ALARM_MS (it needs a person), not a line per sweep.
   */
  private unreadable(stream: string): void {
    const seen = this.unreadableSince.get(stream);
    const now = Date.now();
    if (!seen) {
      this.unreadableSince.set(stream, { since: now, alarmed: false });
      this.parts.logger.warn({ stream }, "a queued send's stream read without its MessageAccepted; read again on the next sweep");
    } else if (!seen.alarmed && now - seen.since >= UNREADABLE_ALARM_MS) {
      seen.alarmed = true;
      this.parts.logger.error(
        { stream, sinceMs: now - seen.since },
        "a queued send's stream still reads without its MessageAccepted: it cannot go out, and the instance's later sends wait behind it",
      );
    }
  }

  private async acceptedOf(stream: string): Promise<MessageAccepted | null> {
    const commits = await this.parts.events.readStream(stream);
    const event = commits.flatMap((c) => c.events).find((e) => e.type === 'MessageAccepted');
    return event ? (event as unknown as MessageAccepted) : null;
  }
}
