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
import { MediaError, type MediaFetcher } from '../media/mediaFetcher';

/** What the dispatcher needs of this replica's connections (the session manager). */
export interface Connections {
  /** The instance's open, connected connection here, or null. */
  connected(instanceId: string): Connection | null;
  /** Remembers who a message went to, for its receipts. */
  sending(messageId: string, to: string): void;
}

/** Where a send goes out: here, or on the replica holding the instance's lease (see OwnerRouter). */
export type SendRoute = (instanceId: string, accepted: MessageAccepted, sequence: number) => Promise<'done' | 'retry'>;

export interface DispatchOptions {
  /** Least time between two sends of one instance (0 = no pacing). */
  pacingMs: number;
  /** A send that could not go out for this long fails as expired. */
  ttlMs: number;
  /** How often a queued send is retried while the instance is not connected. */
  retryMs: number;
  /** How long a send handed to a replica may go unconfirmed before another gets it (a crashed replica's sends). */
  ackWaitMs: number;
}

/**
 * Sends accepted messages. A durable consumer of the message streams, shared by the replicas, hands each accepted
 * send to one of them (nothing accepted is lost when a replica dies: what it held is handed out again after
 * `ackWaitMs`); that replica routes it to the one holding the instance's connection, which sends the instance's
 * messages one at a time in order, paced; sends wait (queued) while the instance is not connected, and fail with a
 * reason when the instance was reset or logged out or the TTL passed.
 */
export class Dispatcher {
  private subscription: Subscription | null = null;
  private readonly lanes = new Lanes(256);
  private readonly lastSend = new Map<string, number>();
  /** Jobs handed to this replica and not yet settled: kept alive (in progress) until they are. */
  private readonly held = new Set<Delivery>();
  private heartbeat: NodeJS.Timeout | null = null;
  private route: SendRoute = (instanceId, accepted, sequence) => this.dispatchOwned(instanceId, accepted, sequence);

  constructor(
    private readonly events: EventStore,
    private readonly sessions: Connections,
    private readonly registry: InstanceRegistry,
    private readonly media: MediaFetcher,
    private readonly logger: Logger,
    private readonly options: DispatchOptions,
  ) {}

  /** Sends through `route` (the owner router) instead of straight to this replica's connections. */
  routeWith(route: SendRoute): void {
    this.route = route;
  }

  async start(): Promise<void> {
    this.subscription = await this.events.subscribe(ALL_MESSAGES_PATTERN, { durableName: DURABLES.sessionsDispatch, ackWaitMs: this.options.ackWaitMs });
    this.heartbeat = setInterval(() => this.held.forEach((job) => job.inProgress()), Math.max(100, Math.floor(this.options.ackWaitMs / 3)));
    this.heartbeat.unref();
    void this.run(this.subscription);
  }

  async stop(): Promise<void> {
    await this.subscription?.close();
    await this.lanes.idle();
    if (this.heartbeat) clearInterval(this.heartbeat);
  }

  /** Queues a send of an instance whose connection is here; resolves once it went out, failed, or must wait. */
  dispatchOwned(instanceId: string, accepted: MessageAccepted, sequence: number): Promise<'done' | 'retry'> {
    return new Promise((resolve) => {
      this.lanes.push(instanceId, async () => resolve(await this.dispatch(instanceId, accepted, sequence)));
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
        void this.route(instanceId, accepted as unknown as MessageAccepted, job.commit.sequence)
          .catch((error: unknown) => {
            this.logger.warn({ err: error, instanceId }, 'dispatch failed; will retry');
            return 'retry' as const;
          })
          .then((outcome) => {
            this.held.delete(job);
            if (outcome === 'done') job.ack();
            else job.nak(this.options.retryMs);
          });
      }
    } catch (error) {
      this.logger.error({ err: error }, 'dispatch subscription ended');
    }
  }

  private async dispatch(instanceId: string, accepted: MessageAccepted, sequence: number): Promise<'done' | 'retry'> {
    const { message_id: messageId, to } = accepted.data;
    try {
      const facts = this.registry.get(instanceId);
      // Accepted before a reset, or after it on a view that had not seen it yet (the instance is unlinked now).
      if (facts && (sequence < facts.resetSequence || (facts.resetSequence > 0 && !facts.linkedNumber))) {
        return await this.fail(instanceId, accepted, 'instance_reset');
      }
      if (facts?.blockedReason) return await this.fail(instanceId, accepted, `instance_${facts.blockedReason}`);
      // Erased before it went out: its content is gone (the instance's data key was destroyed), so it cannot be sent.
      if (accepted.data.erased) return await this.fail(instanceId, accepted, 'content_erased');
      if (Date.now() - Date.parse(accepted.occurredAt) > this.options.ttlMs) return await this.fail(instanceId, accepted, 'expired');
      const connection = this.sessions.connected(instanceId);
      if (!connection) return 'retry';
      const wait = (this.lastSend.get(instanceId) ?? 0) + this.options.pacingMs - Date.now();
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
      let media;
      if (accepted.data.type === 'media' && accepted.data.media_url) {
        try {
          media = await this.media.fetch(accepted.data.media_url, accepted.data.filename, accepted.data.text);
        } catch (error) {
          if (error instanceof MediaError) return await this.fail(instanceId, accepted, error.message);
          throw error;
        }
      }
      this.sessions.sending(messageId, to);
      await connection.send({ messageId, to, ...(media ? { media } : { text: accepted.data.text ?? '' }) });
      this.lastSend.set(instanceId, Date.now());
      return 'done';
    } catch (error) {
      this.logger.warn({ err: error, instanceId, messageId }, 'dispatch failed; will retry');
      return 'retry';
    }
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
