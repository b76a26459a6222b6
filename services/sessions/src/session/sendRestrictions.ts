import type { Logger } from '@wagw/lib';
import type { ConnectionEvent } from '../connector/port';
import type { InstanceRegistry } from '../registry/instanceRegistry';
import type { FactWriter } from './factWriter';
import { isSendPaused, restrictionOf, type KnownRestriction } from './sendPause';
import { SendProbes } from './sendProbes';
import type { Session } from './session';

type Reported = Extract<ConnectionEvent, { type: 'restricted' | 'unrestricted' }>;
type Receipt = Extract<ConnectionEvent, { type: 'receipt' }>;

/**
 * The restrictions WhatsApp puts on the sends of the instances connected here, as the session manager knows them:
 * what an instance's connection here heard (at once, before the fact is stored), else what the log says (a restriction
 * recorded by an earlier connection); and so whether the instance's sends wait. The facts a connection reports are
 * recorded by the session manager, like all of them.
 *
 * The one place where a send the platform took ends a restriction: the adapters report only what the platform says
 * (a send refused, a restriction and the end it named, its lifting) and each send's outcome.
 */
export class SendRestrictions {
  private readonly probes = new SendProbes();

  constructor(
    private readonly facts: FactWriter,
    private readonly registry: InstanceRegistry,
    private readonly logger: Logger,
    /** How long sends wait after a restriction whose end WhatsApp did not name. */
    private readonly unknownEndPauseMs: number,
  ) {}

  /** Whether the instance's sends wait now; `session` is its connection here, if any. */
  paused(instanceId: string, session: Session | undefined): boolean {
    const now = Date.now();
    return isSendPaused(this.known(instanceId, session, now), now, this.unknownEndPauseMs);
  }

  /** A message is handed to the instance's connection (`session`): a probe while a restriction is known. */
  handed(instanceId: string, session: Session | undefined, messageId: string): void {
    this.probes.handed(instanceId, messageId, this.known(instanceId, session, Date.now()) !== null);
  }

  /** The connection reported a restriction (its end, when WhatsApp named one) or its lifting. */
  heard(session: Session, event: Reported, at: string): void {
    // Lifted, or reported (again): no send handed over so far proves anything of what holds now.
    this.probes.clear(session.instanceId);
    if (event.type === 'unrestricted') {
      session.restriction = null;
      return;
    }
    session.restriction = { since: Date.parse(at), until: event.until === null ? null : Date.parse(event.until) };
    this.logger.warn({ instanceId: session.instanceId, until: event.until }, 'WhatsApp restricted the account: its sends wait');
  }

  /**
   * A receipt: the outcome of a send. A probe taken ends the restriction known, whether the connection heard of it or
   * an earlier one recorded it (`unrestricted`, recorded as the adapters' reports are). A refused send ends nothing.
   */
  receipt(session: Session, event: Receipt, at: string): void {
    if (event.status !== 'sent' && event.status !== 'failed') return;
    const id = session.instanceId;
    const probe = this.probes.settle(id, event.messageId);
    if (event.status !== 'sent' || !probe || !this.known(id, session, Date.parse(at))) return;
    session.restriction = null;
    this.probes.clear(id);
    this.facts.connection(id, { type: 'unrestricted' }, session.resets, at);
  }

  /** Forgets the instance's sends (it was reset). */
  forget(instanceId: string): void {
    this.probes.clear(instanceId);
  }

  private known(instanceId: string, session: Session | undefined, now: number): KnownRestriction | null {
    return session?.restriction !== undefined ? session.restriction : restrictionOf(this.registry.stateOf(instanceId), now);
  }
}
