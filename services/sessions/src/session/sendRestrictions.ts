import type { Logger } from '@wagw/lib';
import type { ConnectionEvent } from '../connector/port';
import type { InstanceRegistry } from '../registry/instanceRegistry';
import type { FactWriter } from './factWriter';
import { isSendPaused, restrictionOf, type KnownRestriction } from './sendPause';
import type { Session } from './session';

type Reported = Extract<ConnectionEvent, { type: 'restricted' | 'unrestricted' }>;
type Receipt = Extract<ConnectionEvent, { type: 'receipt' }>;

/**
 * The restrictions WhatsApp puts on the sends of the instances connected here, as the session manager knows them:
 * what an instance's connection here heard (at once, before the fact is stored), else what the log says (a restriction
 * recorded by an earlier connection); and so whether the instance's sends wait. The facts a connection reports are
 * recorded by the session manager, like all of them.
 */
export class SendRestrictions {
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

  /** The connection reported a restriction (its end, when WhatsApp named one) or its lifting. */
  heard(session: Session, event: Reported, at: string): void {
    if (event.type === 'unrestricted') {
      session.restriction = null;
      return;
    }
    session.restriction = { since: Date.parse(at), until: event.until === null ? null : Date.parse(event.until) };
    this.logger.warn({ instanceId: session.instanceId, until: event.until }, 'WhatsApp restricted the account: its sends wait');
  }

  /**
   * A receipt. A send taken: a restriction this connection never heard of (recorded by an earlier one, whose end
   * WhatsApp did not name) is over, this was the probe. The connection's own restrictions are its adapter's to lift.
   */
  receipt(session: Session, event: Receipt, at: string): void {
    if (event.status !== 'sent') return;
    const id = session.instanceId;
    if (session.restriction !== undefined || !restrictionOf(this.registry.stateOf(id), Date.parse(at))) return;
    session.restriction = null;
    this.facts.connection(id, { type: 'unrestricted' }, session.resets, at);
  }

  private known(instanceId: string, session: Session | undefined, now: number): KnownRestriction | null {
    return session?.restriction !== undefined ? session.restriction : restrictionOf(this.registry.stateOf(instanceId), now);
  }
}
