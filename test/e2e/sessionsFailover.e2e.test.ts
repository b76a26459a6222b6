import { BUCKETS, connectNats, LeaseStore, type NatsHandle } from '@wagw/lib';

import { KvSandboxLedger } from '../../services/sessions/src/connector/sandbox';
import { startStack, type TestStack } from '../harness/stack';
import { startSessionsProcess, type SessionsProcess } from '../harness/sessionsProcess';
import { testLogger } from '../harness/logger';
import { eventually, sleep } from '../harness/wait';
import { retriedSend } from '../harness/retriedSend';
import { linkInSandbox } from '../harness/sandboxLink';

/**
 * Two sessions replicas in processes of their own (plus the stack's in-process one), production lease timings.
 * The replica running a linked instance is SIGKILLed while sends keep coming: another one takes the instance over
 * from the stored link (no QR code) within 15 s, and every accepted send reaches the platform exactly once.
 */
describe('sessions failover (SIGKILL of the owning replica)', () => {
  let stack: TestStack;
  let replicas: SessionsProcess[] = [];
  let nats: NatsHandle;
  let leases: LeaseStore;
  let ledger: KvSandboxLedger;

  beforeAll(async () => {
    stack = await startStack(
      {},
      true,
      {},
      {
        sessionsTarget: async (natsUrl) => {
          const env = {
            SEND_PACING_MS: '0',
            TYPING_MS_PER_CHAR: '0',
            SANDBOX_SENT_DELAY_MS: '10',
            SANDBOX_DELIVERED_DELAY_MS: '30',
            SANDBOX_READ_DELAY_MS: '60',
          };
          replicas = await Promise.all(['replica-a', 'replica-b'].map((id) => startSessionsProcess(natsUrl, id, env)));
          return `ipv4:${replicas.map((r) => `127.0.0.1:${r.grpcPort}`).join(',')}`;
        },
      },
    );
    nats = await connectNats({ url: stack.nats.url, name: 'failover-test', logger: testLogger('failover-test') });
    leases = await LeaseStore.open(nats, BUCKETS.sessionLeases);
    ledger = await KvSandboxLedger.open(nats);
  }, 60_000);

  afterAll(async () => {
    await Promise.all(replicas.map((r) => r.crash()));
    await nats.close();
    await stack.close();
  });

  const send = (id: string, n: number): Promise<string> => retriedSend(stack, id, `failover-${n}`, `message ${n}`);

  it('hands a linked instance to another replica within 15 s and sends every accepted message exactly once', async () => {
    const id = (await stack.call('/v1/create_instance')).body.instance_id as string;
    expect((await stack.call(`/v1/get_qrcode?instance_id=${id}`)).status).toBe(200);
    expect((await stack.call(`/v1/sandbox/scan?instance_id=${id}&number=4915112345678`)).status).toBe(200);
    const linked = await eventually(
      () => stack.call(`/v1/status?instance_id=${id}`),
      (s) => s.body.state === 'connected',
      10_000,
    );
    expect(linked.body.state).toBe('connected');

    const lease = await leases.read(id);
    const owner = replicas.find((r) => r.replicaId === lease?.owner);
    expect(owner).toBeDefined();

    const accepted: string[] = [];
    // Sends issued once the owner was gone: none of them can have reached it. (One the owner took just before
    // it died reaches the platform too, but its sandbox receipts die with the process.)
    const acceptedAfterCrash: string[] = [];
    let crashedAt = 0;
    for (let n = 1; n <= 10; n++) accepted.push(await send(id, n));
    const during = (async () => {
      for (let n = 11; n <= 40; n++) {
        const issuedAfterCrash = crashedAt > 0;
        const messageId = await send(id, n);
        accepted.push(messageId);
        if (issuedAfterCrash) acceptedAfterCrash.push(messageId);
        await sleep(30);
      }
    })();
    await sleep(200);
    await owner!.crash();
    crashedAt = Date.now();

    const takenOver = await eventually(
      () => leases.read(id),
      (l) => Boolean(l && l.owner !== owner!.replicaId),
      20_000,
    );
    const takeoverMs = Date.now() - crashedAt;
    expect(takenOver?.owner).not.toBe(owner!.replicaId);
    expect(takeoverMs).toBeLessThan(15_000);
    await during;

    expect(new Set(accepted).size).toBe(40);
    expect(acceptedAfterCrash.length).toBeGreaterThan(10);
    // What the dead replica held unconfirmed comes back after the dispatch ack wait (15 s by default).
    const taken = await eventually(
      () => ledger.takenIds(id),
      (ids) => ids.length >= 40,
      30_000,
    );
    expect(taken.sort()).toEqual([...accepted].sort());

    const history = await eventually(
      async () => (await stack.call(`/v1/history?instance_id=${id}&limit=1000`)).body.events as Array<{ type: string; data: { message_id?: string } }>,
      (events) => acceptedAfterCrash.every((m) => events.some((e) => e.type === 'MessageSent' && e.data.message_id === m)),
      10_000,
    );
    expect(history.filter((e) => e.type === 'MessageFailed')).toEqual([]);
    const sentCounts = new Map<string, number>();
    for (const e of history) if (e.type === 'MessageSent') sentCounts.set(e.data.message_id!, (sentCounts.get(e.data.message_id!) ?? 0) + 1);
    expect([...sentCounts.values()].every((count) => count === 1)).toBe(true);
    // Each message accepted after the kill was sent by the new owner, exactly once.
    for (const m of acceptedAfterCrash) expect(sentCounts.get(m)).toBe(1);
    const status = await stack.call(`/v1/status?instance_id=${id}`);
    expect(status.body.state).toBe('connected');
  }, 90_000);
});

/**
 * reset_instance right after the replica running the instance died (SIGKILL), its lease not run out yet: the live
 * replicas cannot log the device out, but once the lease has run out one wipes the link. Leases of 3 s here (renewed
 * every 0.75 s, swept every 0.3 s), so the test waits seconds, not the production 10 s.
 */
describe('sessions failover: reset while the owning replica is dead', () => {
  const leaseTimings = { leaseTtlMs: 3_000, leaseRenewMs: 750, claimEveryMs: 300 };
  let stack: TestStack;
  let replicas: SessionsProcess[] = [];
  let nats: NatsHandle;
  let leases: LeaseStore;
  let ledger: KvSandboxLedger;

  beforeAll(async () => {
    stack = await startStack({}, true, leaseTimings, {
      sessionsTarget: async (natsUrl) => {
        const env = {
          SEND_PACING_MS: '0',
          TYPING_MS_PER_CHAR: '0',
          LEASE_TTL_MS: String(leaseTimings.leaseTtlMs),
          LEASE_RENEW_MS: String(leaseTimings.leaseRenewMs),
          LEASE_CLAIM_EVERY_MS: String(leaseTimings.claimEveryMs),
        };
        replicas = await Promise.all(['replica-c', 'replica-d'].map((id) => startSessionsProcess(natsUrl, id, env)));
        return `ipv4:${replicas.map((r) => `127.0.0.1:${r.grpcPort}`).join(',')}`;
      },
    });
    nats = await connectNats({ url: stack.nats.url, name: 'reset-failover-test', logger: testLogger('reset-failover-test') });
    leases = await LeaseStore.open(nats, BUCKETS.sessionLeases);
    ledger = await KvSandboxLedger.open(nats);
  }, 60_000);

  afterAll(async () => {
    await Promise.all(replicas.map((r) => r.crash()));
    await nats.close();
    await stack.close();
  });

  it('wipes the link once the dead replica lease has run out: get_qrcode shows a QR code, not the old phone connected', async () => {
    const id = (await stack.call('/v1/create_instance')).body.instance_id as string;
    await linkInSandbox(stack, id, '4915112345678');
    const lease = await leases.read(id);
    const holder = replicas.find((r) => r.replicaId === lease?.owner);
    expect(holder).toBeDefined();
    await holder!.crash();

    expect((await stack.call(`/v1/reset_instance?instance_id=${id}`)).status).toBe(200);
    await eventually(
      () => ledger.linkOf(id),
      (number) => number === null,
      10_000,
      100,
    );
    expect(await ledger.linkOf(id)).toBeNull();
    const qr = await stack.call(`/v1/get_qrcode?instance_id=${id}`);
    expect([qr.status, qr.body.code ?? null]).toEqual([200, null]);
    const status = await stack.call(`/v1/status?instance_id=${id}`);
    expect(status.body).toMatchObject({ state: 'qr', linked_number: null });
  }, 60_000);
});
