import { erasedByErasureAt } from '@wagw/lib';
import type { InstanceFacts } from '../registry/instanceRegistry';

/** What decides a queued send's fate without a connection. */
export interface SendAge {
  /** Log sequence of its `MessageAccepted`. */
  sequence: number;
  /** When it was accepted (ms since the epoch). */
  acceptedAt: number;
}

/**
 * Why a queued send must fail now, whatever replica holds it, or null while it may still go out: accepted before a
 * reset (or after it, on a view that had not seen it: the instance is unlinked now) or before an erasure, its
 * instance logged out or failed, or older than the send TTL.
 */
export const sendFailureOf = (facts: InstanceFacts | undefined, send: SendAge, now: number, ttlMs: number): string | null => {
  if (facts && send.sequence < facts.resetSequence) return 'instance_reset';
  // Its content was erased (the data key destroyed) after it was accepted: a copy opened before must not go out.
  if (facts && erasedByErasureAt(facts.dataErasedAt, send.acceptedAt)) return 'content_erased';
  // Before the next rule: a logout clears the linked number too, and then it, not an earlier reset, is the reason.
  if (facts?.blockedReason) return `instance_${facts.blockedReason}`;
  if (facts && facts.resetSequence > 0 && !facts.linkedNumber) return 'instance_reset';
  if (now - send.acceptedAt > ttlMs) return 'expired';
  return null;
};
