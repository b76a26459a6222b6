import {
  Lanes,
  ALL_MESSAGES_PATTERN,
  messageEvent,
  messageStream,
  type Delivery,
  type EventStore,
  type Logger,
  type MessageAccepted,
  type Subscription,
} from '@wagw/lib';

import type { InstanceRegistry } from '../registry/instanceRegistry';
import type { SessionManager } from '../session/sessionManager';
import { MediaError, type MediaFetcher } from '../media/mediaFetcher';

export const DISPATCH_DURABLE = 'sessions-dispatch';

export interface DispatchOptions {
  /** Least time between two sends of one instance (0 = no pacing). */
  pacingMs: number;
  /** A send that could not go out for this long fails as expired. */
  ttlMs: number;
  /** How often a queued send is retried while the instance is not connected. */
  retryMs: number;
}

/**
 * Sends accepted messages: a durable consumer of the message streams (so nothing accepted is lost when a replica
 * dies), one lane per instance (in order, paced), queued while the instance is disconnected, failed with a reason
 * when the instance was reset or logged out or the TTL passed.
 */
export class Dispatcher {
  private subscription: Subscription | null = null;
  private readonly lanes = new Lanes(256);
  private readonly lastSend = new Map<string, number>();

  constructor(
    private readonly events: EventStore,
    private readonly sessions: SessionManager,
    private readonly registry: InstanceRegistry,
    private readonly media: MediaFetcher,
    private readonly logger: Logger,
    private readonly options: DispatchOptions,
  ) {}

  async start(): Promise<void> {
    this.subscription = await this.events.subscribe(ALL_MESSAGES_PATTERN, { durableName: DISPATCH_DURABLE, ackWaitMs: 60_000 });
    void this.run(this.subscription);
  }

  async stop(): Promise<void> {
    await this.subscription?.close();
    await this.lanes.idle();
  }

  private async run(subscription: Subscription): Promise<void> {
    try {
      for await (const job of subscription) {
        const accepted = job.commit.events.find((e) => e.type === 'MessageAccepted');
        if (!accepted) {
          job.ack();
          continue;
        }
        const instanceId = job.commit.stream.split('.')[0]!;
        this.lanes.push(instanceId, () => this.dispatch(instanceId, job, accepted as unknown as MessageAccepted));
      }
    } catch (error) {
      this.logger.error({ err: error }, 'dispatch subscription ended');
    }
  }

  private async dispatch(instanceId: string, job: Delivery, accepted: MessageAccepted): Promise<void> {
    const { message_id: messageId, to } = accepted.data;
    try {
      const facts = this.registry.get(instanceId);
      if (facts && job.commit.sequence < facts.resetSequence) return await this.fail(instanceId, job, accepted, 'instance_reset');
      if (facts?.blockedReason) return await this.fail(instanceId, job, accepted, `instance_${facts.blockedReason}`);
      if (Date.now() - Date.parse(accepted.occurredAt) > this.options.ttlMs) return await this.fail(instanceId, job, accepted, 'expired');
      const connection = this.sessions.connected(instanceId);
      if (!connection) return job.nak(this.options.retryMs);
      const wait = (this.lastSend.get(instanceId) ?? 0) + this.options.pacingMs - Date.now();
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
      let media;
      if (accepted.data.type === 'media' && accepted.data.media_url) {
        try {
          media = await this.media.fetch(accepted.data.media_url, accepted.data.filename, accepted.data.text);
        } catch (error) {
          if (error instanceof MediaError) return await this.fail(instanceId, job, accepted, error.message);
          throw error;
        }
      }
      this.sessions.sending(messageId, to);
      await connection.send({ messageId, to, ...(media ? { media } : { text: accepted.data.text ?? '' }) });
      this.lastSend.set(instanceId, Date.now());
      job.ack();
    } catch (error) {
      this.logger.warn({ err: error, instanceId, messageId }, 'dispatch failed; will retry');
      job.nak(this.options.retryMs);
    }
  }

  private async fail(instanceId: string, job: Delivery, accepted: MessageAccepted, reason: string): Promise<void> {
    const { message_id: messageId, to } = accepted.data;
    await this.events.append(messageStream(instanceId, messageId), [messageEvent('MessageFailed', new Date().toISOString(), { message_id: messageId, to, reason })], {
      expectedVersion: 'any',
      commandId: `failed-${messageId}`,
    });
    job.ack();
  }
}
