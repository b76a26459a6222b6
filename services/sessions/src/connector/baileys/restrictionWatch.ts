import type { BinaryNode, ConnectionState } from '@whiskeysockets/baileys';
import type { Logger } from '@wagw/lib';
import type { ConnectionEvent } from '../port';
import type { WaSocket } from './socket';
import { ACCOUNT_RESTRICTED_CODE } from './waMessages';

type Timelock = NonNullable<ConnectionState['reachoutTimeLock']>;

/**
 * What WhatsApp says of restrictions of the account's sends, as one connection hears it: a send answered 463 (Baileys
 * neither retries nor reports it beyond the failed message), and WhatsApp's reach-out timelock (asked for after a 463,
 * and pushed as a notification when it is set or lifted: it names the end). Reports `restricted` at every refusal
 * (with the end named last, while it is ahead) and when the end changes, `unrestricted` whenever WhatsApp says it is
 * lifted. That a send taken again ends a restriction is the session's to conclude (`SendRestrictions`), from the
 * send's `sent` receipt; a send taken says nothing here, so a lifting WhatsApp pushes later is still reported.
 */
export class RestrictionWatch {
  /** The end reported last (null: unknown), or undefined while none was reported, or since it was lifted. */
  private reported: string | null | undefined = undefined;

  constructor(
    private readonly emit: (event: ConnectionEvent) => void,
    private readonly logger: Logger,
  ) {}

  onAck(sock: WaSocket, { attrs }: BinaryNode): void {
    if (attrs.error !== ACCOUNT_RESTRICTED_CODE) return;
    // Every refusal: a refused probe starts the session's pause again (the decider records a restriction once while it
    // holds, so repeats are no news in the log).
    this.restricted(this.reported && Date.parse(this.reported) > Date.now() ? this.reported : null);
    // WhatsApp Web asks for the timelock to show when sending is possible again.
    sock.fetchAccountReachoutTimelock().catch((error: unknown) => this.logger.warn({ err: error }, 'asking WhatsApp when the restriction ends failed'));
  }

  onTimelock({ isActive, timeEnforcementEnds }: Timelock): void {
    if (!isActive) {
      // Reported even when this connection heard no refusal: the restriction may have been heard by the connection
      // before a reconnect, or on another replica, and its sends wait until a lifting is reported. The log records a
      // lifting only while a restriction holds, so one reported with nothing to lift is no news.
      this.lifted();
      return;
    }
    // An end already past on this clock is no end: the account is restricted now, until WhatsApp says otherwise.
    const until = timeEnforcementEnds && timeEnforcementEnds.getTime() > Date.now() ? timeEnforcementEnds.toISOString() : null;
    if (until !== this.reported) this.restricted(until);
  }

  private restricted(until: string | null): void {
    this.reported = until;
    this.emit({ type: 'restricted', until });
  }

  private lifted(): void {
    this.reported = undefined;
    this.emit({ type: 'unrestricted' });
  }
}
