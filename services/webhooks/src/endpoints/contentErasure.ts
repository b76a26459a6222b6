import { erasedByErasureAt, webhookPayloadSealed } from '@wagw/lib';
import type { WebhookEvent } from '../routing/webhookEvent';

/** What the webhooks service knows of an instance's erasure (the endpoint directory: one map lookup). */
export interface ErasureView {
  /** Whether a payload of webhook `type`, of an event at `eventTime`, held content the instance's latest erasure destroyed. */
  contentErased(instanceId: string, type: string, eventTime: string): boolean;
}

/**
 * Whether a payload of webhook `type`, made from an event at `eventTime`, held content that an erasure at `erasedAt`
 * destroyed. Decided by time, not by whether the content still opens: a payload opened before the erasure (waiting
 * in a lane, in an attempt running meanwhile, in a cache) still holds the plaintext, and a record of it written
 * afterwards is sealed under the instance's new key, so it would open again (a bug hunt saw all of these POSTed).
 */
export const erasedByTime = (erasedAt: string | null, type: string, eventTime: string): boolean =>
  erasedAt !== null && webhookPayloadSealed(type) && erasedByErasureAt(Date.parse(erasedAt), Date.parse(eventTime));

/** A payload read after its erasure (a replay of erased history sends these): it holds no content, only `erased: true`. */
export const isErasedBody = (body: string): boolean => {
  try {
    const parsed = JSON.parse(body) as { data?: { erased?: unknown } } | null;
    return parsed?.data?.erased === true;
  } catch {
    return false;
  }
};

/** Whether a recorded delivery's payload holds content erased since its event: it must be neither sent nor kept. */
export const erasedDelivery = (erasedAt: string | null, delivery: { eventType: string; createdAt: string; body: string | null }): boolean =>
  delivery.body !== null && erasedByTime(erasedAt, delivery.eventType, delivery.createdAt) && !isErasedBody(delivery.body);

/** Whether a webhook about to be recorded holds content the instance's erasure destroyed: it is then recorded without it. */
export const holdsErasedContent = (erasure: ErasureView, instanceId: string, webhook: WebhookEvent): boolean =>
  webhook.data.erased !== true && erasure.contentErased(instanceId, webhook.type, webhook.timestamp);
