import { connectNats, type Credential, type NatsHandle } from '@wagw/lib';
import { startTestNatsCluster, type TestNatsCluster } from '../../../../test/harness/natsServer';
import { testLogger } from '../../../../test/harness/logger';
import { credentialRefusal, openRevocations, type Revocations } from './revocations';

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
const credential = (tokenId: string): Credential => ({ account: 'acme', tokenId, instanceId: null, scopes: ['send'], expiresAt: Date.now() + 600_000 });

/**
 * A revoked token is refused by every gateway replica within 1 s (issue 15), also while a NATS node is down: each
 * replica's watch of the bucket runs on a one-replica consumer that dies with its node, and the client library
 * noticed only after 54-82 s (measured). Six gateway replicas' revocations on a 3-node cluster; the node holding the
 * most of their watch consumers is killed and stays down while a token is revoked.
 */
describe('revocations on a 3-node cluster with a node down', () => {
  let cluster: TestNatsCluster;
  const handles: NatsHandle[] = [];
  const replicas: Revocations[] = [];

  beforeAll(async () => {
    cluster = await startTestNatsCluster(3);
    for (let i = 0; i < 6; i++) {
      const handle = await connectNats({ url: cluster.url, name: `gateway-${i}`, logger: testLogger(), replicas: 3, timeoutMs: 2_000 });
      handles.push(handle);
      replicas.push(await openRevocations(handle, testLogger()));
    }
  }, 60_000);
  afterAll(async () => {
    for (const replica of replicas) replica.close();
    for (const handle of handles) await handle.close().catch(() => undefined);
    await cluster.dispose();
  });

  it('refuses a token revoked while the node of watch consumers is down on every replica within 1 s, and then as revoked', async () => {
    const first = credential('0123456789abcdef0123456789abcdef');
    await replicas[0]!.revoke('acme', first.tokenId);
    for (let i = 0; i < 50 && replicas.some((r) => !r.isRevoked(first)); i++) await sleep(100);
    expect(replicas.map((r) => r.isRevoked(first))).toEqual(replicas.map(() => true));

    // The node holding the most watch consumers (each is one replica: it lives on one node only).
    const hosts = new Map<string, number>();
    for await (const info of handles[0]!.jsm.consumers.list('KV_revoked_tokens')) {
      const node = info.cluster?.leader;
      if (node) hosts.set(node, (hosts.get(node) ?? 0) + 1);
    }
    const victim = [...hosts].sort((a, b) => b[1] - a[1])[0]![0];
    await cluster.node(victim).kill();
    // The bucket (R3) takes writes with 2 of 3 nodes (after its leader is elected again, if it was there).
    await sleep(1_000);
    const second = credential('fedcba9876543210fedcba9876543210');
    let revoked = false;
    for (let attempt = 0; attempt < 100 && !revoked; attempt++) {
      revoked = await replicas[0]!.revoke('acme', second.tokenId).then(
        () => true,
        async () => {
          await sleep(200);
          return false;
        },
      );
    }
    expect(revoked).toBe(true);
    await sleep(1_000);
    // Within 1 s every replica refuses it: as revoked (401), or, a replica whose watch is known behind, with 503.
    expect(replicas.map((r) => credentialRefusal(second, r)?.code ?? 'passes')).not.toContain('passes');
    // And soon, with the node still down, as revoked everywhere.
    for (let i = 0; i < 150 && replicas.some((r) => credentialRefusal(second, r)?.code !== 'token_revoked'); i++) await sleep(100);
    expect(replicas.map((r) => credentialRefusal(second, r)?.code)).toEqual(replicas.map(() => 'token_revoked'));
    await cluster.node(victim).restart();
  }, 90_000);
});
