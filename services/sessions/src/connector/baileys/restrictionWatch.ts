import type { BinaryNode, ConnectionState } from '@whiskeysockets/baileys';
import type { Logger } from '@wagw/lib';
import type { ConnectionEvent } from '../port';
import type { WaSocket } from './socket';
import { ACCOUNT_RESTRICTED_CODE } from './waMessages';

type Timelock = NonNullable<ConnectionState['reachoutTimeLock']>;

/**
 * Whether WhatsApp restricts the account's sends, from what one connection hears: a send answered 463 (Baileys
 * neither retries nor reports it beyond the failed message), WhatsApp's reach-out timelock (asked for after a 463,
 * and pushed as a notification when it is set or lifted: it names the end), and a send taken again (the restriction
 * is over, whatever its announced end). Reports `restricted` / `unrestricted` when that changes, or the end does.
 */
export class RestrictionWatch {
  /** The end reported last (null: unknown), or undefined while no restriction is known. */
  private reported: string | null | undefined = undefined;

  constructor(
    private readonly emit: (event: ConnectionEvent) => void,
    private readonly logger: Logger,
  ) {}

  onAck(sock: WaSocket, { attrs }: BinaryNode): void {
    if (attrs.error === ACCOUNT_RESTRICTED_CODE) {
      if (this.reported === undefined) this.restricted(null);
      // WhatsApp Web asks for the timelock to show when sending is possible again.
      sock.fetchAccountReachoutTimelock().catch((error: unknown) => this.logger.warn({ err: error }, 'asking WhatsApp when the restriction ends failed'));
    } else if (!attrs.error && this.reported !== undefined) {
      this.lifted();
    }
  }

  onTimelock({ isActive, timeEnforcementEnds }: Timelock): void {
    if (!isActive) {
      if (this.reported !== undefined) this.lifted();
      return;
    }
    const until = timeEnforcementEnds && !Number.isNaN(timeEnforcementEnds.getTime()) ? timeEnforcementEnds.toISOString() : null;
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
