import type { BinaryNode } from '@whiskeysockets/baileys';
import { testLogger } from '../../../../../test/harness/logger';
import type { ConnectionEvent } from '../port';
import { newInstanceCaches } from './instanceCaches';
import { ReceiptReporter } from './receiptReporter';
import type { SentMessageStore } from './sentStore';

const ack = (id: string): BinaryNode => ({ tag: 'ack', attrs: { id } });
/** Reports settle on a chain of promises (the id lookups). */
const settled = () => new Promise((resolve) => setTimeout(resolve, 10));

describe('ReceiptReporter', () => {
  const setUp = () => {
    const events: ConnectionEvent[] = [];
    const caches = newInstanceCaches();
    caches.sentIds.set('WA1', 'm1');
    const reporter = new ReceiptReporter({
      instanceId: 'I1',
      caches,
      sent: { get: async () => null } as unknown as SentMessageStore,
      emit: (event) => events.push(event),
      logger: testLogger(),
    });
    return { events, reporter };
  };

  it('reports the server ack of a message once, however often it comes', async () => {
    const { events, reporter } = setUp();
    reporter.onAck(ack('WA1'));
    reporter.onAck(ack('WA1'));
    await settled();
    expect(events).toEqual([{ type: 'receipt', messageId: 'm1', status: 'sent' }]);
  });

  it('reports the ack of a message handed to WhatsApp again (its first sent was lost), not dropped as a repeat', async () => {
    const { events, reporter } = setUp();
    reporter.onAck(ack('WA1'));
    reporter.resending('WA1');
    reporter.onAck(ack('WA1'));
    await settled();
    expect(events).toEqual([
      { type: 'receipt', messageId: 'm1', status: 'sent' },
      { type: 'receipt', messageId: 'm1', status: 'sent' },
    ]);
  });
});
