import { Lanes, messageEvent, messageStream, type EventStore, type Logger, type MessageAccepted } from '@wagw/lib';

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
  /** Remembers who a message went to, for its receipts, and that it was handed over (it may probe a restriction). */
  sending(instanceId: string, messageId: string, to: string): void;
  /** Whether the instance's sends wait now (WhatsApp restricted the account). */
  sendsPaused(instanceId: string): boolean;
}

/**
 * How a send handed to this replica's lane ended: `done` (sent, or failed for good), `waiting` (its instance is not
 * connected here, or older sends of it wait: it stays queued in the send ledger for a later turn) or `retry` (a
 * transient failure: it stays queued, and the next sweep hands it out again).
 */
type DispatchOutcome = 'done' | 'waiting' | 'retry';

export interface DispatchOptions {
  /** Least time between two sends of one instance (0 = no pacing). */
  pacingMs: number;
  /**
   * A send the platform keeps refusing (an error every try, while connected) fails as `send_failed` once its tries
   * span this long: the sends behind it wait for it, in order, so it must not hold them until the TTL.
   */
  retryForMs: number;
  /** A send that could not go out for this long fails as expired. */
  ttlMs: number;
  /** How often queued sends are swept (and a send that failed transiently is handed out again). */
  retryMs: number;
  /** "typing…" before each text, inside the pacing gap; absent: none. */
  typing?: TypingOptions;
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Sends accepted messages, from the send ledger: every replica's read model of the sends that wait to go out, fed
 * from the log (nothing accepted is lost when a replica dies: the ledger of the replica that takes the instance over
 * lists it until its `MessageSent` or `MessageFailed` is recorded). The replica holding an instance's connection
 * sends its queue one at a time, in order, paced: as soon as its ledger shows a new send, when a send went out, and
 * on every sweep (`QueueSweeper`), which also fails the sends that can no longer go out (reset, logged out, past the
 * TTL) of the instances this replica decides for. No consumer of its own: a dispatch consumer beside the ledger
 * read every accepted send a second time (measured: 7.4k -> 9.8k sends accepted per second without it).
 */
export class Dispatcher {
  private readonly lanes = new Lanes(256);
  private readonly lastSend = new Map<string, number>();
  private readonly local = new LocalSends();
  /** Sends whose latest tries all failed (`retry`), by stream: since when. */
  private readonly failingSince = new Map<string, number>();
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
      // A restricted account's sends wait: reading them into the lane only to hear `waiting` would repeat on every send.
      sendsHere: (instanceId) => sessions.connected(instanceId) !== null && !sessions.sendsPaused(instanceId),
      send: (instanceId, accepted, sequence) => this.enqueue(instanceId, accepted, sequence),
      inLane: (instanceId) => this.lanes.size(instanceId),
      fail: (instanceId, accepted, reason) => this.fail(instanceId, accepted, reason),
      logger,
      ttlMs: options.ttlMs,
      everyMs: options.retryMs,
    });
    queue.onQueued((instanceId) => this.sweeper.refill(instanceId));
  }

  /**
   * Queued sends are failed here only for instances `predicate` names (this replica holds their lease, or nobody does
   * and it holds the unheld-sends lease).
   */
  decideFor(predicate: (instanceId: string) => boolean): void {
    this.sweeper.decideFor(predicate);
  }

  start(): void {
    this.sweeper.start();
  }

  async stop(): Promise<void> {
    await this.sweeper.stop();
    await this.lanes.idle();
  }

  /**
   * Puts a send in the instance's lane; it settles itself there. A send already in this replica's lane, or sent from
   * here, is not taken twice. Once one went out, the next queued ones are read into the lane.
   */
  private enqueue(instanceId: string, accepted: MessageAccepted, sequence: number): void {
    const stream = messageStream(instanceId, accepted.data.message_id);
    if (!this.local.take(stream)) return;
    this.lanes.push(instanceId, async () => {
      let outcome = await this.dispatch(instanceId, accepted, sequence);
      if (outcome === 'retry') outcome = await this.retryOrGiveUp(instanceId, accepted, stream);
      else this.failingSince.delete(stream);
      this.local.release(stream, outcome === 'done');
      if (outcome === 'done') this.sweeper.refill(instanceId);
    });
  }

  /** A try failed: the next sweep tries again, unless the tries have failed for `retryForMs` (then `send_failed`). */
  private async retryOrGiveUp(instanceId: string, accepted: MessageAccepted, stream: string): Promise<DispatchOutcome> {
    const since = this.failingSince.get(stream) ?? Date.now();
    if (Date.now() - since < this.options.retryForMs) {
      this.failingSince.set(stream, since);
      return 'retry';
    }
    this.failingSince.delete(stream);
    return this.fail(instanceId, accepted, 'send_failed').catch(() => 'retry' as const);
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
      // A refusal (463) may have come during the pacing gap, the typing or the media fetch: the account's sends wait.
      if (this.sessions.sendsPaused(instanceId)) return 'waiting';
      this.sessions.sending(instanceId, messageId, to);
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
