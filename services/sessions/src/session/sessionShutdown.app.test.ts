import { InMemoryEventStore, instanceEvent, instanceStream, messageStream, type InstanceEvent } from '@wagw/lib';
import { testLogger } from '../../../../test/harness/logger';
import { eventually } from '../../../../test/harness/wait';
import { MemoryTextBucket } from '../connector/baileys/textBucket';
import type { Connection, ConnectionEvent, Connector } from '../connector/port';
import { InboundRefStore } from '../inbound/inboundRefs';
import { InstanceRegistry } from '../registry/instanceRegistry';
import { FactWriter } from './factWriter';
import { inboundEvent } from './platformFacts';
import { SessionManager } from './sessionManager';
import { everyLease } from '../../../../test/harness/everyLease';

// Application test of what a replica's shutdown leaves in the instances' state: the real manager, fact writer and
// registry on an in-memory store; a connector that shows a QR code as soon as it connects.

/** Shows a QR code once connected; a linked instance's connection hears one message while it closes (a flush). */
class QrOnConnect implements Connector {
  readonly name = 'qr-on-connect';

  private readonly linked: (instanceId: string) => boolean;

  constructor(linked: (instanceId: string) => boolean) {
    this.linked = linked;
  }

  async connect(instanceId: string, onEvent: (event: ConnectionEvent) => void): Promise<Connection> {
    if (!this.linked(instanceId)) setImmediate(() => onEvent({ type: 'qr', qr: `qr-${instanceId}` }));
    const none = async (): Promise<never> => Promise.reject(new Error('not scripted'));
    const close = async (): Promise<void> => {
      if (this.linked(instanceId)) onEvent({ type: 'inbound', message: { ...LAST_WORDS, ref: `ref-${instanceId}` } });
    };
    return { send: none, requestPairingCode: none, checkNumbers: none, listGroups: none, setTyping: none, markRead: none, logout: none, close };
  }

  downloadMedia = async (): Promise<never> => Promise.reject(new Error('not scripted'));
  purge = async (): Promise<void> => undefined;
  forgetContent = async (): Promise<void> => undefined;
}

const LAST_WORDS = {
  platformMessageId: 'PLATFORM-1',
  from: '4915199999999',
  pushName: null,
  text: 'are you there?',
  media: null,
  timestamp: new Date().toISOString(),
};

describe('SessionManager: a replica shutting down (application, in-memory store)', () => {
  it('records a disconnect for an instance showing a QR code (nobody takes an unlinked one over), none for a linked one, and what a closing connection still heard', async () => {
    const store = new InMemoryEventStore();
    const registry = new InstanceRegistry(store, testLogger());
    registry.start();
    const sessions = new SessionManager(
      new QrOnConnect((id) => registry.isLinked(id)),
      new FactWriter(store, new InboundRefStore(new MemoryTextBucket()), testLogger()),
      registry,
      everyLease,
      testLogger(),
    );
    const now = new Date().toISOString();
    const append = (id: string, events: InstanceEvent[]): Promise<unknown> =>
      store.append(instanceStream(id), events, { expectedVersion: 'any', commandId: `c-${id}-${events.length}` });
    await append('UNLINKED', [instanceEvent('InstanceCreated', now, { instance_id: 'UNLINKED', account: 'acme' })]);
    await append('LINKED', [
      instanceEvent('InstanceCreated', now, { instance_id: 'LINKED', account: 'acme' }),
      instanceEvent('InstanceLinked', now, { number: '4915112345678' }),
    ]);
    await registry.reach('UNLINKED', 5_000);
    await eventually(
      async () => registry.isLinked('LINKED'),
      (linked) => linked,
    );
    await sessions.getQr('UNLINKED', 5_000);
    await sessions.reconnect('LINKED');
    const typesOf = async (id: string): Promise<string[]> => (await store.readStream(instanceStream(id))).flatMap((c) => c.events.map((e) => e.type));
    await eventually(
      async () => typesOf('UNLINKED'),
      (types) => types.at(-1) === 'InstanceQrIssued',
    );

    await sessions.closeAll();
    await registry.stop();

    const last = (await store.readStream(instanceStream('UNLINKED'))).flatMap((c) => c.events).at(-1);
    expect(last).toMatchObject({ type: 'InstanceDisconnected', data: { reason: 'server_shutdown', reconnecting: false } });
    // Another replica takes a linked instance over and records its own connection.
    expect(await typesOf('LINKED')).not.toContain('InstanceDisconnected');
    // The platform was told the message arrived (Baileys acks it): it is recorded though its connection was stopping.
    const received = await store.readStream(
      messageStream('LINKED', inboundEvent('LINKED', { type: 'inbound', message: { ...LAST_WORDS, ref: '' } }, '').messageId),
    );
    expect(received.flatMap((c) => c.events)).toMatchObject([{ type: 'MessageReceived', data: { text: 'are you there?' } }]);
  });
});
