import type { Logger } from '@wagw/lib';
import type { ConnectionEvent } from '../connector/port';
import type { FactWriter } from './factWriter';
import { connectionFactOf } from './platformFacts';
import type { SendRestrictions } from './sendRestrictions';
import { applyStateChange, type Session } from './session';

/** What a connection event may do to the session manager that runs it. */
export interface ConnectionEventEffects {
  facts: FactWriter;
  restrictions: SendRestrictions;
  logger: Logger;
  /** AUTO_MARK_READ: every inbound message is marked read as it arrives. */
  autoMarkRead: boolean;
  /** Whether `session` is still the instance's current one here (not stopped or replaced). */
  current: (session: Session) => boolean;
  /** Wipes the instance's stored credentials (logged out, failed for good). */
  purge: (instanceId: string) => Promise<void>;
  scheduleReconnect: (session: Session) => void;
  /** Ends the session here once its last facts are stored. */
  endAfterFacts: (session: Session) => Promise<void>;
}

/**
 * A connection event: the session's state changes at once and in order; the fact is recorded behind the instance's
 * earlier ones (`FactWriter`), tied to the reset count the connection started under. Never throws: a failure is logged.
 */
export const handleConnectionEvent = async (session: Session, event: ConnectionEvent, effects: ConnectionEventEffects): Promise<void> => {
  const { facts, restrictions } = effects;
  const id = session.instanceId;
  const at = new Date().toISOString();
  if (!effects.current(session)) {
    // A stopped connection's last words (Baileys flushes what it buffered as it closes): the platform was told a
    // message arrived, or the receipt was taken, so each is recorded; nothing else of it counts any more.
    if (event.type === 'inbound') facts.inbound(id, event, at);
    else if (event.type === 'receipt') facts.receipt(id, event, at);
    return;
  }
  const fact = connectionFactOf(event);
  if (fact) facts.connection(id, fact, session.resets, at);
  try {
    switch (event.type) {
      case 'qr':
      case 'connected':
      case 'disconnected':
      case 'logged_out':
      case 'failed': {
        const next = applyStateChange(session, event);
        if (next === 'wipe_and_end') await effects.purge(id);
        if (next === 'reconnect') effects.scheduleReconnect(session);
        else if (next !== 'stay') await effects.endAfterFacts(session);
        return;
      }
      case 'restricted':
      case 'unrestricted':
        return restrictions.heard(session, event, at);
      case 'receipt':
        restrictions.receipt(session, event, at);
        return facts.receipt(id, event, at);
      case 'inbound':
        facts.inbound(id, event, at);
        if (effects.autoMarkRead) markReadNow(session, event.message.ref, effects.logger);
        return;
    }
  } catch (error) {
    effects.logger.error({ err: error, instanceId: id, event: event.type }, 'handling a connection event failed');
  }
};

/** AUTO_MARK_READ: the sender sees blue ticks as soon as the gateway has the message. */
const markReadNow = (session: Session, ref: string, logger: Logger): void => {
  session.connection?.markRead(ref).catch((error: unknown) => {
    logger.warn({ err: error, instanceId: session.instanceId }, 'marking an inbound message read failed');
  });
};
