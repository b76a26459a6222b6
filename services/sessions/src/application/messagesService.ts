import { createHash, randomUUID } from 'node:crypto';
import {
  AppError,
  assertCallableUrl,
  assertInstanceId,
  conflict,
  isVersionConflict,
  notFound,
  instanceStateCatchingUp,
  unavailable,
  messageEvent,
  messageStream,
  type EventStore,
  type MessageAccepted,
} from '@wagw/lib';
import type { InstanceFacts, InstanceRegistry } from '../registry/instanceRegistry';
import type { SendLedger } from '../registry/sendLedger';
import { failedLinkAdvice } from '../session/qrWait';
import { NO_RESERVATION, UnfoldedAccepts } from './unfoldedAccepts';
import { acceptedContent, assertContent, recipientOf, referredMessage, type SendContent } from './sendContent';

/** Per instance: sends waiting to go out, and sends accepted per UTC day; 0 = no limit. */
export interface SendQuotas {
  queueMax: number;
  dailyCap: number;
}

export interface SendCommand extends SendContent {
  account: string;
  instanceId: string;
  /** A number (`send`), or '' with `groupId` (`send_group`). */
  to: string;
  groupId: string;
  idempotencyKey: string;
}

/** What makes two sends the same one (a retry) rather than two messages under one Idempotency-Key. */
const SAME_SEND_FIELDS = ['to', 'type', 'text', 'media_url', 'filename', 'quoted_message_id', 'location', 'vcard', 'reaction', 'voice_note'] as const;

/** Message ids are stream tokens; a repeated idempotency key names the same message. */
const messageIdFor = (instanceId: string, key: string): string =>
  key ? `m_${createHash('sha256').update(`${instanceId}\u0000${key}`).digest('hex').slice(0, 24)}` : `m_${randomUUID().replace(/-/g, '')}`;

/**
 * Accepting a send: validate, check the instance can send, append MessageAccepted (durable before the answer).
 * Dispatch happens on the dispatcher's durable consumer.
 */
export class MessagesService {
  constructor(
    private readonly events: EventStore,
    private readonly registry: InstanceRegistry,
    private readonly checkMediaUrl: (url: string) => Promise<void>,
    /** `folded`: the log position the ledger has folded up to (its projection's). */
    private readonly limits: { ledger: SendLedger; quotas: SendQuotas; folded: () => number } | null = null,
  ) {
    this.unfolded = new UnfoldedAccepts(() => limits?.folded() ?? 0);
  }

  /** Accepts of this replica its ledger does not show yet: counted by the quota checks too. */
  private readonly unfolded: UnfoldedAccepts;

  /** The instance's send quotas and how much of them is used (`status`); max 0 = no limit. */
  sendUsage(instanceId: string, now = new Date()): { queued: number; queueMax: number; today: number; dailyCap: number } {
    const { ledger, quotas } = this.limits ?? { ledger: null, quotas: { queueMax: 0, dailyCap: 0 } };
    const unfolded = ledger ? this.unfolded.count(instanceId) : 0;
    return {
      queued: (ledger?.queued(instanceId) ?? 0) + unfolded,
      queueMax: quotas.queueMax,
      today: (ledger?.acceptedOn(instanceId, now) ?? 0) + unfolded,
      dailyCap: quotas.dailyCap,
    };
  }

  /**
   * Why the send cannot be taken now (the instance blocked or not linked; backpressure and the ban guard: a full queue
   * or a spent daily cap is a 429 that says which, never growth without bound), or null. A repeat of a send this
   * replica is accepting right now (same message id) takes no second place in the quotas.
   */
  private refusalOf(facts: InstanceFacts, instanceId: string, repeat: boolean): AppError | null {
    if (facts.blockedReason) {
      // Logged out: its link is gone, a QR scan makes a new one. Failed: refused by WhatsApp, its link kept.
      const advice = facts.linkedNumber ? failedLinkAdvice(facts.blockedReason) : `The instance cannot send: ${facts.blockedReason}; scan a new QR code`;
      return conflict(`instance_${facts.blockedReason}`, advice);
    }
    if (!facts.linkedNumber) return conflict('not_linked', 'The instance is not linked: scan a QR code first (get_qrcode)');
    if (repeat) return null;
    const now = new Date();
    const { queued, queueMax, today, dailyCap } = this.sendUsage(instanceId, now);
    if (dailyCap > 0 && today >= dailyCap) {
      // The cap counts sends of the UTC day: the next one starts at midnight UTC.
      const tomorrow = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1);
      return new AppError('rate_limited', 'daily_send_cap_reached', `The instance accepted its ${dailyCap} sends of today (UTC); retry tomorrow`, {
        retryAfterS: Math.ceil((tomorrow - now.getTime()) / 1000),
      });
    }
    // After the cap: a spent cap is the longer wait, and a client told "queue full" would retry in a second for nothing.
    if (queueMax > 0 && queued >= queueMax) {
      return new AppError('rate_limited', 'send_queue_full', `${queued} sends of this instance wait to go out (at most ${queueMax}); retry once some went out`);
    }
    return null;
  }

  async accept(command: SendCommand): Promise<string> {
    assertInstanceId(command.instanceId);
    const to = recipientOf(command.to, command.groupId);
    assertContent(command);
    if (command.type === 'media') await this.assertMediaUrl(command.mediaUrl);
    // The read model is normally current; only an answer that would refuse the send is confirmed against the
    // instance's stream first (one indexed lookup), so a just-linked instance is not refused. A reset or logout
    // not yet seen here fails the message in dispatch, with its reason.
    let facts = this.registry.get(command.instanceId);
    if (!facts || facts.account !== command.account || facts.blockedReason || !facts.linkedNumber) {
      const current = await this.registry.reach(command.instanceId, 2_000);
      facts = this.registry.get(command.instanceId);
      // Not caught up in time (NATS electing a leader, a replica just started): a refusal now could be wrong; the
      // client retries a 503, while a 404 or 409 would drop a send that is fine.
      if (!current && (!facts || facts.account !== command.account || facts.blockedReason || !facts.linkedNumber)) {
        throw instanceStateCatchingUp();
      }
    }
    if (!facts || facts.account !== command.account) throw notFound('instance_not_found', 'Instance not found');
    const messageId = messageIdFor(command.instanceId, command.idempotencyKey);
    const accepted = messageEvent<MessageAccepted>('MessageAccepted', new Date().toISOString(), { message_id: messageId, to, ...acceptedContent(command) });
    const stream = messageStream(command.instanceId, messageId);
    // A repeat of a send this replica is accepting right now: it takes no second place in the quotas.
    const repeat = this.unfolded.holds(messageId);
    const refusal = this.refusalOf(facts, command.instanceId, repeat);
    if (refusal) {
      // A repeat of a send taken before (its first answer was lost) is answered its message id, though that send is
      // what spent the quota, or the instance was logged out since: it goes out (or fails) whatever the repeat hears.
      // Read only on a refusal: the hot path (and a leader election) does not wait for it.
      if (command.idempotencyKey && (await this.acceptedBefore(stream, accepted.data))) return messageId;
      throw refusal;
    }
    // Passing reserves the send's place at once (no await since the check), so parallel sends see each other; a
    // repeat racing its first takes none, nor does a send without quotas (no ledger would ever fold it).
    const reservation = !this.limits || repeat ? NO_RESERVATION : this.unfolded.reserve(command.instanceId, messageId);
    try {
      // After the ownership check: another account's message ids tell nothing.
      if (command.quotedMessageId) await referredMessage(this.events, command.instanceId, command.quotedMessageId, to, 'quoted_message_id');
      if (command.type === 'reaction') await referredMessage(this.events, command.instanceId, command.reactionMessageId, to, 'message_id');
      const stored = await this.events.append(stream, [accepted], { expectedVersion: 0, commandId: `accept-${messageId}` }).catch((error: unknown) => {
        if (!isVersionConflict(error)) throw error;
        return null;
      });
      if (stored === null || stored.duplicate) {
        // A repeat that raced its first: the ledger counts that one. The same send is answered its message id;
        // another one under the same Idempotency-Key is refused, not answered as if it had been taken (it would never go out).
        reservation.release();
        // The store says it holds this send, and a read of it just found nothing: a read behind the write (seen for a
        // moment after a NATS node rejoined), not a server fault. The client's retry (same key) finds it.
        if (!(await this.acceptedBefore(stream, accepted.data))) {
          throw unavailable('event_store_unavailable', 'This send is stored but could not be read back yet; retry with the same Idempotency-Key');
        }
      } else reservation.appended(stored.version);
      return messageId;
    } catch (error) {
      reservation.release();
      throw error;
    }
  }

  /**
   * Whether the message stream holds this very send already (true), holds nothing (false), or holds another one
   * under the same Idempotency-Key (409). One accepted before an erasure cannot be compared (its content is gone):
   * 409 too, as answering its id would tell the client a send was taken that never goes out.
   */
  private async acceptedBefore(stream: string, data: MessageAccepted['data']): Promise<boolean> {
    const first = (await this.events.readStream(stream))[0]?.events[0];
    if (first === undefined) return false;
    if (first.type !== 'MessageAccepted') return true;
    if (first.data.erased === true) {
      throw conflict('idempotency_key_reused', "This Idempotency-Key was used for a message before the instance's data was erased; use a new key");
    }
    const differs = SAME_SEND_FIELDS.some((field) => JSON.stringify(first.data[field] ?? null) !== JSON.stringify(data[field] ?? null));
    if (differs) {
      throw conflict('idempotency_key_reused', 'This Idempotency-Key was used for another message of this instance; use a new key for a new message');
    }
    return true;
  }

  private async assertMediaUrl(url: string): Promise<void> {
    assertCallableUrl(url, 'media_url', 'invalid_media_url');
    await this.checkMediaUrl(url);
  }
}
