import {
  ALL_MESSAGES_PATTERN,
  DURABLES,
  instanceIdOf,
  Lanes,
  messageEvent,
  messageStream,
  type Delivery,
  type EventStore,
  type Logger,
  type MessageAccepted,
  type Subscription,
} from '@wagw/lib';

import type { Connection } from '../connector/port';
import type { InstanceRegistry } from '../registry/instanceRegistry';
import type { SendQueue } from '../registry/sendLedger';
import { MediaError, type MediaFetcher } from '../media/mediaFetcher';
import { LocalSends } from './localSends';
import { outboundOf, typingMsFor, type TypingOptions } from './outbound';
import { QueueSweeper } from './queueSweeper';
import { sendFailureOf } from './sendVerdict';

/** What the dispatcher needs of this replica's connections (the session manager). */
export interface Connections {
  /** The instance's open, connected connection here, or null. */
  connected(instanceId: string): Connection | null;
  /** Remembers who a message went to, for its receipts. */
  sending(messageId: string, to: string): void;
  /** Whether the instance's sends wait now (WhatsApp restricted the account). */
  sendsPaused(instanceId: string): boolean;
}

/**
 * How handing out a send ended: `done` (sent, or failed for good), `waiting` (its instance is not connected, or older
 * sends of it wait: it stays queued in the send ledger, and the owner's sweeper sends it in order later) or `retry`
 * (a transient failure: the dispatch consumer offers it again).
 */
export type DispatchOutcome = 'done' | 'waiting' | 'retry';

/** Where a send goes out: here, or on the replica holding the instance's lease (see OwnerRouter). */
export type SendRoute = (instanceId: string, accepted: MessageAccepted, sequence: number) => Promise<DispatchOutcome>;

export interface DispatchOptions {
  /** Least time between two sends of one instance (0 = no pacing). */
  pacingMs: number;
  /** A send that could not go out for this long fails as expired. */
  ttlMs: number;
  /** How soon a send that failed transiently is offered again, and how often queued sends are swept. */
  retryMs: number;
  /** How long a send handed to a replica may go unconfirmed before another gets it (a crashed replica's sends). */
  ackWaitMs: number;
  /** "typing…" before each text, inside the pacing gap; absent: none. */
  typing?: TypingOptions;
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Sends accepted messages. A durable consumer of the message streams, shared by the replicas, hands each accepted
 * send to one of them (nothing accepted is lost when a replica dies: what it held is handed out again after
 * `ackWaitMs`); that replica routes it to the one holding the instance's connection, which sends the instance's
 * messages one at a time in order, paced. A send whose instance is not connected is acked and waits in the send
 * ledger (the log itself: nothing is lost), so one instance's queue never holds the consumer's in-flight slots; the
 * owner's `QueueSweeper` sends the queue in order once the instance connects. Sends fail with a reason when the
 * instance was reset or logged out or the TTL passed (`sendFailureOf`, decided by whichever replica holds the send).
 */
export class Dispatcher {
  private subscription: Subscription | null = null;
  private readonly lanes = new Lanes(256);
  private readonly lastSend = new Map<string, number>();
  /** Jobs handed to this replica and not yet settled: kept alive (in progress) until they are. */
  private readonly held = new Set<Delivery>();
  private heartbeat: NodeJS.Timeout | null = null;
  private route: SendRoute = (instanceId, accepted, sequence) => this.dispatchOwned(instanceId, accepted, sequence);
  private readonly local = new LocalSends();
  private readonly sweeper: QueueSweeper;

  constructor(
    private readonly events: EventStore,
    private readonly sessions: Connections,
    private readonly registry: InstanceRegistry,
    private readonly queue: SendQueue,
    private readonly media: MediaFetcher,
    private readonly logger: Logger,
    private readonly options: DispatchOptions,
  ) {
    this.sweeper = new QueueSweeper({
      events,
      queue,
      registry,
      local: this.local,
      connectedHere: (instanceId) => sessions.connected(instanceId) !== null,
      send: (instanceId, accepted, sequence) => this.enqueue(instanceId, accepted, sequence),
      inLane: (instanceId) => this.lanes.size(instanceId),
      fail: (instanceId, accepted, reason) => this.fail(instanceId, accepted, reason),
      logger,
      ttlMs: options.ttlMs,
      everyMs: options.retryMs,
    });
  }

  /**
   * Sends through `route` (the owner router) instead of straight to this replica's connections; queued sends are
   * failed here only for instances `decidesFor` names (this replica holds their lease, or nobody does).
   */
  routeWith(route: SendRoute, decidesFor: (instanceId: string) => boolean): void {
    this.route = route;
    this.sweeper.decideFor(decidesFor);
  }

  /** One sweep of the queued sends now (the timer runs one every `retryMs`). */
  sweep(): Promise<void> {
    return this.sweeper.sweep();
  }

  async start(): Promise<void> {
    this.subscription = await this.events.subscribe(ALL_MESSAGES_PATTERN, { durableName: DURABLES.sessionsDispatch, ackWaitMs: this.options.ackWaitMs });
    this.heartbeat = setInterval(() => this.held.forEach((job) => job.inProgress()), Math.max(100, Math.floor(this.options.ackWaitMs / 3)));
    this.heartbeat.unref();
    void this.run(this.subscription);
    this.sweeper.start();
  }

  async stop(): Promise<void> {
    await this.subscription?.close();
    await this.sweeper.stop();
    await this.lanes.idle();
    if (this.heartbeat) clearInterval(this.heartbeat);
  }

  /**
   * A send the dispatch consumer handed out, for an instance whose connection is here; resolves once it went out,
   * failed, or must wait. One with older sends of its instance still queued waits in the send ledger (`waiting`, at
   * once), not in the lane: there it would hold one of the consumer's in-flight slots for as long as the queue takes
   * to go out, paced (a long queue: every slot, and every instance's sends would stop). The sweeper hands it out in
   * its turn.
   */
  dispatchOwned(instanceId: string, accepted: MessageAccepted, sequence: number): Promise<DispatchOutcome> {
    if (this.waitsBehind(instanceId, sequence)) return Promise.resolve('waiting');
    return this.enqueue(instanceId, accepted, sequence);
  }

  /**
   * Puts a send in the instance's lane. A send already in this replica's lane, or sent from here, is not taken twice
   * (`waiting`: whoever holds it settles it). Once one went out, the next queued ones are read into the lane.
   */
  private enqueue(instanceId: string, accepted: MessageAccepted, sequence: number): Promise<DispatchOutcome> {
    const stream = messageStream(instanceId, accepted.data.message_id);
    if (!this.local.take(stream)) return Promise.resolve('waiting');
    return new Promise((resolve) => {
      this.lanes.push(instanceId, async () => {
        const outcome = await this.dispatch(instanceId, accepted, sequence);
        this.local.release(stream, outcome === 'done');
        if (outcome === 'done') this.sweeper.refill(instanceId);
        resolve(outcome);
      });
    });
  }

  private async run(subscription: Subscription): Promise<void> {
    try {
      for await (const job of subscription) {
        const accepted = job.commit.events.find((e) => e.type === 'MessageAccepted');
        if (!accepted) {
          job.ack();
          continue;
        }
        const instanceId = instanceIdOf(job.commit.stream);
        this.held.add(job);
        void this.handOut(instanceId, accepted as unknown as MessageAccepted, job.commit.sequence).then((outcome) => {
          this.held.delete(job);
          if (outcome === 'retry') job.nak(this.options.retryMs);
          else job.ack();
        });
      }
    } catch (error) {
      this.logger.error({ err: error }, 'dispatch subscription ended');
    }
  }

  /** A send the consumer handed to this replica: failed here when it can no longer go out, else routed to its owner. */
  private async handOut(instanceId: string, accepted: MessageAccepted, sequence: number): Promise<DispatchOutcome> {
    try {
      const reason = this.failureOf(instanceId, accepted, sequence);
      if (reason) return await this.fail(instanceId, accepted, reason);
      return await this.route(instanceId, accepted, sequence);
    } catch (error) {
      this.logger.warn({ err: error, instanceId }, 'dispatch failed; will retry');
      return 'retry';
    }
  }

  private failureOf(instanceId: string, accepted: MessageAccepted, sequence: number): string | null {
    const reason = sendFailureOf(this.registry.get(instanceId), { sequence, acceptedAt: Date.parse(accepted.occurredAt) }, Date.now(), this.options.ttlMs);
    // Erased before it went out: its content is gone (the instance's data key was destroyed), so it cannot be sent.
    return reason ?? (accepted.data.erased ? 'content_erased' : null);
  }

  /** Older sends of the instance still queued and not sent from here: this one waits its turn (the sweeper's). */
  private waitsBehind(instanceId: string, sequence: number): boolean {
    // Oldest first: only the sends before this one are looked at (on every send, so no copy and no sort).
    for (const queued of this.queue.queuedSends(instanceId)) {
      if (queued.sequence >= sequence) return false;
      if (!this.local.isSettled(queued.stream)) return true;
    }
    return false;
  }

  private async dispatch(instanceId: string, accepted: MessageAccepted, sequence: number): Promise<DispatchOutcome> {
    const { message_id: messageId, to } = accepted.data;
    try {
      const reason = this.failureOf(instanceId, accepted, sequence);
      if (reason) return await this.fail(instanceId, accepted, reason);
      const connection = this.sessions.connected(instanceId);
      // A restricted account's sends wait (queued, not failed): sending on would deepen the restriction.
      if (!connection || this.sessions.sendsPaused(instanceId) || this.waitsBehind(instanceId, sequence)) return 'waiting';
      const typingMs = accepted.data.type === 'text' && this.options.typing ? typingMsFor(accepted.data.text ?? '', this.options.typing) : 0;
      // Typing is part of the pacing: the gap between two sends is at least pacingMs, and at least the typing.
      const wait = (this.lastSend.get(instanceId) ?? 0) + this.options.pacingMs - typingMs - Date.now();
      if (wait > 0) await sleep(wait);
      let media;
      if (accepted.data.type === 'media' && accepted.data.media_url) {
        try {
          media = await this.media.fetch(accepted.data.media_url, accepted.data.filename, accepted.data.text);
        } catch (error) {
          if (error instanceof MediaError) return await this.fail(instanceId, accepted, error.message);
          throw error;
        }
      }
      const outbound = await outboundOf(this.events, instanceId, accepted, media);
      if (typingMs > 0) await this.type(connection, to, typingMs);
      this.sessions.sending(messageId, to);
      await connection.send(outbound);
      this.lastSend.set(instanceId, Date.now());
      return 'done';
    } catch (error) {
      this.logger.warn({ err: error, instanceId, messageId }, 'dispatch failed; will retry');
      return 'retry';
    }
  }

  /** "typing…" for `ms`, then "paused"; a presence the platform refuses does not hold the send back. */
  private async type(connection: Connection, to: string, ms: number): Promise<void> {
    const presence = (typing: boolean): Promise<void> =>
      connection.setTyping(to, typing).catch((error: unknown) => this.logger.warn({ err: error }, 'a typing presence was not sent'));
    await presence(true);
    await sleep(ms);
    await presence(false);
  }

  private async fail(instanceId: string, accepted: MessageAccepted, reason: string): Promise<'done'> {
    const { message_id: messageId, to } = accepted.data;
    await this.events.append(
      messageStream(instanceId, messageId),
      [messageEvent('MessageFailed', new Date().toISOString(), { message_id: messageId, to, reason })],
      {
        expectedVersion: 'any',
        commandId: `failed-${messageId}`,
      },
    );
    return 'done';
  }
}
