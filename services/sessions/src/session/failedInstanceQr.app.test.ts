import { InMemoryEventStore, instanceEvent, isAppError } from '@wagw/lib';
import { everyLease } from '../../../../test/harness/everyLease';
import { LikeBaileys } from '../../../../test/harness/likeBaileysConnector';
import { registryWithLinked } from '../../../../test/harness/linkedRegistry';
import { testLogger } from '../../../../test/harness/logger';
import { MemoryTextBucket } from '../connector/baileys/textBucket';
import { InboundRefStore } from '../inbound/inboundRefs';
import { type InstanceRegistry } from '../registry/instanceRegistry';
import { FactWriter } from './factWriter';
import { SessionManager } from './sessionManager';

// An instance WhatsApp refused (403 banned, 405 client too old: `failed`) keeps its link. A hunt on the emulator saw
// get_qrcode log that link back in silently (409 already_connected while status said failed), or answer 503
// platform_connection_failed "try again" forever (405), while the send refusal said "scan a new QR code".

const ID = 'FAILED1';

describe('SessionManager: get_qrcode on a failed instance (application, in-memory store)', () => {
  let registry: InstanceRegistry;
  let sessions: SessionManager;

  afterEach(async () => {
    await sessions.closeAll();
    await registry.stop();
  });

  it('answers 409 instance_failed at once, saying to reconnect or reset, opens no connection, and gives the lease back', async () => {
    const store = new InMemoryEventStore();
    registry = await registryWithLinked(store, ID, { then: [instanceEvent('InstanceFailed', new Date().toISOString(), { reason: 'forbidden' })] });
    expect(registry.get(ID)?.blockedReason).toBe('forbidden');
    const connector = new LikeBaileys();
    // The owner router took the free lease for this call; nothing runs under it after the refusal.
    const released: string[] = [];
    const leases = { ...everyLease, release: async (instanceId: string) => void released.push(instanceId) };
    sessions = new SessionManager(
      connector,
      new FactWriter(store, new InboundRefStore(new MemoryTextBucket()), testLogger()),
      registry,
      leases,
      testLogger(),
      undefined,
      () => 0,
    );
    const error = await sessions.getQr(ID, 3_000).then(
      () => null,
      (e: unknown) => e,
    );
    expect(isAppError(error) && [error.kind, error.code]).toEqual(['conflict', 'instance_failed']);
    expect((error as Error).message).toMatch(/forbidden.*reconnect.*reset_instance/);
    expect(connector.opened).toEqual([]);
    expect(released).toEqual([ID]);
  });
});
