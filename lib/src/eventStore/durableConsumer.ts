import { AckPolicy, type ConsumerConfig, type JetStreamManager } from '@nats-io/jetstream';
import { nanos } from '@nats-io/transport-node';

export interface DurableSettings {
  /** The subject filter (the pattern's subjects). */
  filter: string;
  /** Ack wait (default 30 s) and unacked messages at most (default 1,000). */
  ackWaitMs?: number;
  maxAckPending?: number;
  /** Where a new durable starts. */
  start: Partial<ConsumerConfig>;
}

/**
 * Makes sure the durable consumer exists with these settings: created where it starts, or updated in place, keeping
 * its position, when a new release asks for other settings (a wider pattern: a release listening to more).
 */
export const ensureDurable = async (jsm: JetStreamManager, streamName: string, durableName: string, settings: DurableSettings): Promise<void> => {
  const existing = await jsm.consumers.info(streamName, durableName).catch(() => null);
  const ackWait = nanos(settings.ackWaitMs ?? 30_000);
  const maxAckPending = settings.maxAckPending ?? 1_000;
  const { filter } = settings;
  if (existing && (existing.config.ack_wait !== ackWait || existing.config.max_ack_pending !== maxAckPending || existing.config.filter_subject !== filter)) {
    await jsm.consumers.update(streamName, durableName, { ack_wait: ackWait, max_ack_pending: maxAckPending, filter_subject: filter });
  }
  if (!existing) {
    await jsm.consumers.add(streamName, {
      durable_name: durableName,
      ack_policy: AckPolicy.Explicit,
      filter_subject: filter,
      ack_wait: ackWait,
      max_ack_pending: maxAckPending,
      ...settings.start,
    });
  }
};
