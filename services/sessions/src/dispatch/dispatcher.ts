import { setTimeout as delay } from 'node:timers/promises';
import { Lanes, messageEvent, messageStream, type EventStore, type Logger, type MessageAccepted } from '@wagw/lib';

import type { Connection } from '../connector/port';
import type { InstanceRegistry } from '../registry/instanceRegistry';
import type { SendQueue } from '../registry/sendLedger';
import { MediaError, type MediaFetcher } from '../media/mediaFetcher';
import { LocalSends } from './localSends';
import { ReferredMessageNotSent } from '../application/sendContent';
import { outboundOf, typingMsFor, VoiceNoteNotAudio, type TypingOptions } from './outbound';
import { QueueSweeper } from './queueSweeper';
import { SendAborts } from './sendAborts';
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
 * How a send handed to this replica's lane ended: `sent` (handed to the platform: its receipt follows), `done` (failed
 * for good, recorded), `waiting` (its instance is not connected here, or older sends of it wait: it stays queued in the
 * send ledger for a later turn) or `retry` (a transient failure: it stays queued, and the next sweep hands it out again).
 */
type DispatchOutcome = 'sent' | 'done' | 'waiting' | 'retry';

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
  /**
   * A send handed to the platform whose `MessageSent` (or `MessageFailed`) is not recorded this long after is handed
   * out again, same message id (default 60 s; an ack normally takes well under a second): see LocalSends.prune.
   */
  confirmWithinMs?: number;
  /** "typing…" before each text, inside the pacing gap; absent: none. */
  typing?: TypingOptions;
}

const DEFAULT_CONFIRM_WITHIN_MS = 60_000;

/** Waits `ms`, or less once `signal` aborts (the send can no longer go out: it need not wait for its turn). */
const sleep = (ms: number, signal: AbortSignal): Promise<void> => delay(ms, undefined, { signal }).catch(() => undefined);

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
  private readonly local: LocalSends;
  /** A gap between two failed tries longer than this starts a send's retry window again (see retryOrGiveUp). */
  private readonly quietMs: number;
  /** Sends whose latest tries all failed (`retry`), by stream: since when, and when the latest was. */
  private readonly failing = new Map<string, { since: number; last: number }>();
  private readonly sweeper: QueueSweeper;
  /** What stops the work on a send in a lane here once a reset, logout or erasure means it can no longer go out. */
  private readonly aborts = new SendAborts();

  constructor(
    private readonly events: EventStore,
    private readonly sessions: Connections,
    private readonly registry: InstanceRegistry,
    private readonly queue: SendQueue,
    private readonly media: MediaFetcher,
    private readonly logger: Logger,
    private readonly options: DispatchOptions,
  ) {
    this.local = new LocalSends(options.confirmWithinMs ?? DEFAULT_CONFIRM_WITHIN_MS);
    // A failing send is tried again on every sweep: a try that begins longer than a few sweeps after the last one
    // ended did not follow it (nothing was tried meanwhile).
    this.quietMs = 5 * options.retryMs;
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
      forget: (stillQueued) => {
        for (const stream of this.failing.keys()) if (!stillQueued(stream)) this.failing.delete(stream);
      },
      logger,
      ttlMs: options.ttlMs,
      everyMs: options.retryMs,
    });
    queue.onQueued((instanceId) => this.sweeper.refill(instanceId));
    registry.onChange(({ instanceId }) => this.aborts.check(instanceId));
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
      const startedAt = Date.now();
      // Why this try failed when it knows better than `send_failed` (a media fetch's reason).
      const tried: { reason?: string } = {};
      const signal = this.aborts.begin(instanceId, stream, () => this.failureOf(instanceId, accepted, sequence));
      let outcome: DispatchOutcome;
      try {
        outcome = await this.dispatch(instanceId, accepted, sequence, tried, signal);
        if (outcome === 'retry') outcome = await this.retryOrGiveUp(instanceId, accepted, stream, startedAt, tried.reason ?? 'send_failed');
      } finally {
        this.aborts.end(instanceId, stream);
      }
      if (outcome !== 'retry') this.failing.delete(stream);
      // Only a send handed to the platform waits for a receipt that may never come (LocalSends.prune); a failure is
      // recorded already.
      this.local.release(stream, outcome === 'sent' || outcome === 'done', outcome === 'sent');
      if (outcome === 'sent' || outcome === 'done') this.sweeper.refill(instanceId);
    });
  }

  /**
   * A try failed: the next sweep tries again, unless the tries have failed for `retryForMs` (then the send fails with
   * the latest try's `reason`: `send_failed`, or its own, e.g. `media_timeout: ...`).
   */
  private async retryOrGiveUp(instanceId: string, accepted: MessageAccepted, stream: string, startedAt: number, reason: string): Promise<DispatchOutcome> {
    const now = Date.now();
    const earlier = this.failing.get(stream);
    // Tries in a row: after a pause (the instance was offline, nothing was tried) the window starts again, or a single
    // failure after a reconnect would fail a send whose window ran out while it could not be tried.
    const since = earlier && startedAt - earlier.last <= this.quietMs ? earlier.since : startedAt;
    if (now - since < this.options.retryForMs) {
      this.failing.set(stream, { since, last: now });
      return 'retry';
    }
    return this.fail(instanceId, accepted, reason).catch(() => 'retry' as const);
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

  private async dispatch(
    instanceId: string,
    accepted: MessageAccepted,
    sequence: number,
    tried: { reason?: string },
    signal: AbortSignal,
  ): Promise<DispatchOutcome> {
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
      if (wait > 0) await sleep(wait, signal);
      let media;
      if (accepted.data.type === 'media' && accepted.data.media_url) {
        try {
          media = await this.media.fetch(accepted.data.media_url, accepted.data.filename, accepted.data.text, signal);
        } catch (error) {
          // Aborted: a reset, logout or erasure came meanwhile, and the send fails with its reason now, not retried.
          if (signal.aborted) return await this.aborted(instanceId, accepted, sequence);
          if (!(error instanceof MediaError)) throw error;
          // A host that blipped is tried again on the next sweeps (the instance's later sends wait, in order) until
          // retryForMs, then the send fails with this reason; any other media failure fails it now.
          if (!error.transient) return await this.fail(instanceId, accepted, error.message);
          tried.reason = error.message;
          return 'retry';
        }
      }
      let outbound;
      try {
        outbound = await outboundOf(this.events, instanceId, accepted, media);
      } catch (error) {
        // The send it replies or reacts to failed after this one was accepted: it would point at nothing on WhatsApp.
        if (error instanceof ReferredMessageNotSent) return await this.fail(instanceId, accepted, ReferredMessageNotSent.reason);
        if (error instanceof VoiceNoteNotAudio) return await this.fail(instanceId, accepted, VoiceNoteNotAudio.reason);
        throw error;
      }
      if (typingMs > 0) await this.type(connection, to, typingMs, signal);
      // A refusal (463) may have come during the pacing gap, the typing or the media fetch: the account's sends wait.
      if (this.sessions.sendsPaused(instanceId)) return 'waiting';
      // So may an erasure (a send waits its turn for seconds): its opened content must not go out after it.
      const late = this.failureOf(instanceId, accepted, sequence);
      if (late) return await this.fail(instanceId, accepted, late);
      // Or its receipt, late, for a send handed out again for want of one: it went out, it is not sent twice.
      if (!this.queue.isQueued(instanceId, messageStream(instanceId, messageId))) return 'done';
      this.sessions.sending(instanceId, messageId, to);
      await connection.send(outbound);
      this.lastSend.set(instanceId, Date.now());
      return 'sent';
    } catch (error) {
      this.logger.warn({ err: error, instanceId, messageId }, 'dispatch failed; will retry');
      return 'retry';
    }
  }

  /** "typing…" for `ms`, then "paused"; a presence the platform refuses does not hold the send back. */
  private async type(connection: Connection, to: string, ms: number, signal: AbortSignal): Promise<void> {
    const presence = (typing: boolean): Promise<void> =>
      connection.setTyping(to, typing).catch((error: unknown) => this.logger.warn({ err: error }, 'a typing presence was not sent'));
    await presence(true);
    await sleep(ms, signal);
    await presence(false);
  }

  /**
   * The send's work was aborted, as it could no longer go out: it fails with the reason. Should it be able to go out
   * again by now (logged out, then linked again at once), it stays queued for the next sweep.
   */
  private async aborted(instanceId: string, accepted: MessageAccepted, sequence: number): Promise<DispatchOutcome> {
    const reason = this.failureOf(instanceId, accepted, sequence);
    return reason ? await this.fail(instanceId, accepted, reason) : 'waiting';
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
