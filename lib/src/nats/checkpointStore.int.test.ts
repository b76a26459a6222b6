import { Objm, getSha256Backend, setSha256Backend } from '@nats-io/obj';
import { startTestNats, type TestNats } from '../../../test/harness/natsServer';
import { testLogger } from '../../../test/harness/logger';
import { CheckpointStore, type Checkpoint } from './checkpointStore';
import { connectNats, type NatsHandle } from './connection';
import { OBJECT_STORES } from './topology';

/** A body of many object-store chunks (128 KiB each), not all alike. */
const bigBody = (bytes: number): string => {
  const parts: string[] = [];
  for (let i = 0, size = 0; size < bytes; i++) {
    const part = `[${i},"m_${(i * 2_654_435_761).toString(16)}"],`;
    parts.push(part);
    size += part.length;
  }
  return `[${parts.join('')}0]`;
};

/** The checkpoint store's digests (node:crypto since 2026-11) on a real nats-server. */
describe('checkpoint store (real nats-server)', () => {
  let server: TestNats;
  let nats: NatsHandle;
  let checkpoints: CheckpointStore;

  beforeAll(async () => {
    server = await startTestNats();
    nats = await connectNats({ url: server.url, name: 'checkpoint-store-test', logger: testLogger() });
    checkpoints = await CheckpointStore.open(nats);
  });
  afterAll(async () => {
    await nats.close();
    await server.dispose();
  });

  const checkpoint = (model: string, body: string): Checkpoint => ({ model, modelVersion: 1, position: 10, commandId: 'c10', body });

  it('digests with node:crypto and loads a checkpoint of many chunks back exactly', async () => {
    expect(getSha256Backend()).toBe('native');
    const stored = checkpoint('big', bigBody(3_000_000));
    expect(await checkpoints.save(stored)).toBe(true);
    expect(await checkpoints.load('big')).toEqual(stored);
  });

  it('loads a checkpoint an earlier version digested in JavaScript (the same SHA-256)', async () => {
    const stored = checkpoint('written_by_js', bigBody(500_000));
    setSha256Backend('js');
    try {
      await checkpoints.replace(stored);
    } finally {
      setSha256Backend('native');
    }
    expect(await checkpoints.load('written_by_js')).toEqual(stored);
  });

  it('refuses a checkpoint whose chunks do not match its digest', async () => {
    const body = bigBody(400_000);
    await checkpoints.replace(checkpoint('corrupt', body));
    const objects = await new Objm(nats.nc).open(OBJECT_STORES.checkpoints);
    const info = await objects.info('corrupt');
    const chunks = `$O.${OBJECT_STORES.checkpoints}.C.${info!.nuid}`;
    // The same chunks with one byte changed, in place of the stored ones.
    const tampered = new TextEncoder().encode(body.replace('m_', 'n_'));
    await nats.jsm.streams.purge(`OBJ_${OBJECT_STORES.checkpoints}`, { filter: chunks });
    for (let at = 0; at < tampered.length; at += 128 * 1024) await nats.js.publish(chunks, tampered.subarray(at, at + 128 * 1024));
    await expect(checkpoints.load('corrupt')).rejects.toThrow(/digests do not match/);
  });
});
