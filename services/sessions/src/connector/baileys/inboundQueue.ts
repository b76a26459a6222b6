import type { WAMessage } from '@whiskeysockets/baileys';
import type { Logger } from '@wagw/lib';
import type { ConnectionEvent } from '../port';
import type { WaSocket } from './socket';
import { inboundOf, setSenderNumber, unresolvedLidOf } from './waMessages';

/**
 * Inbound messages of one connection, reported in the order they came: a sender known only by LID waits for its
 * number from Baileys' LID store, and the messages after it wait behind it.
 */
export class InboundQueue {
  private chain: Promise<void> = Promise.resolve();
  private waiting = 0;

  constructor(
    private readonly emit: (event: ConnectionEvent) => void,
    private readonly logger: Logger,
  ) {}

  push(sock: WaSocket, message: WAMessage): void {
    const lid = unresolvedLidOf(message.key);
    if (lid === null && this.waiting === 0) this.report(message);
    else this.afterLookup(sock, message, lid);
  }

  private report(message: WAMessage): void {
    const inbound = inboundOf(message);
    if (inbound) this.emit({ type: 'inbound', message: inbound });
  }

  private afterLookup(sock: WaSocket, message: WAMessage, lid: string | null): void {
    this.waiting += 1;
    this.chain = this.chain
      .then(async () => {
        const phoneJid = lid === null ? null : await sock.signalRepository.lidMapping.getPNForLID(lid).catch(() => null);
        if (phoneJid) setSenderNumber(message.key, phoneJid);
        else if (lid !== null) this.logger.warn({ lid }, 'an inbound message from a LID with no known number: reported from the LID');
        this.report(message);
      })
      .catch((error: unknown) => this.logger.error({ err: error }, 'reporting an inbound message failed'))
      .finally(() => {
        this.waiting -= 1;
      });
  }
}
