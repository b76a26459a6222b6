import { startTestNats, type TestNats } from '../../../test/harness/natsServer';
import { testLogger } from '../../../test/harness/logger';
import { JetStreamEventStore } from '../eventStore';
import { instanceEvent, instanceStream, type InstanceEvent } from '../events';
import { CheckpointStore, connectNats, type NatsHandle } from '../nats';
import { INSTANCE_STATES_MODEL, InstanceStates } from './instanceStates';
import { compareWithCheckpoint, rebuildInstanceStates } from './rebuild';

const AT = '2026-11-23T10:00:00.000Z';

/** Read-model checkpoints on a real nats-server: written, restored, caught up from, and checked by a rebuild. */
describe('instance states checkpoints (real nats-server)', () => {
  let server: TestNats;
  let nats: NatsHandle;
  let store: JetStreamEventStore;
  let checkpoints: CheckpointStore;
  const logger = testLogger();

  beforeAll(async () => {
    server = await startTestNats();
    nats = await connectNats({ url: server.url, name: 'checkpoints-test', logger });
    store = await JetStreamEventStore.open(nats, { logger });
    checkpoints = await CheckpointStore.open(nats);
  });
  afterAll(async () => {
    await nats.close();
    await server.dispose();
  });

  let appended = 0;
  const append = (id: string, ...events: InstanceEvent[]) => store.append(instanceStream(id), events, { expectedVersion: 'any', commandId: `c-${++appended}` });
  /** Instances with a life each: created, linked and connected, some reset, some logged out, with a webhook. */
  const history = async (from: number, count: number): Promise<void> => {
    for (let i = from; i < from + count; i++) {
      const id = `CK${String(i).padStart(6, '0')}`;
      await append(id, instanceEvent('InstanceCreated', AT, { instance_id: id, account: `acct${i % 3}` }));
      await append(id, instanceEvent('WebhookConfigured', AT, { url: `https://h.example/${i}`, enabled: true }));
      await append(id, instanceEvent('InstanceLinked', AT, { number: `49151${i}` }), instanceEvent('InstanceConnected', AT, {}));
      if (i % 4 === 0) await append(id, instanceEvent('InstanceReset', AT, {}));
      if (i % 5 === 0) await append(id, instanceEvent('InstanceLoggedOut', AT, { reason: 'logged_out_on_phone' }));
      // Message traffic between instance commits: the model never holds it.
      await store.append(`${id}.message.m${i}`, [{ type: 'MessageAccepted', schemaVersion: 1, occurredAt: AT, data: { to: '1' } }], {
        expectedVersion: 'any',
        commandId: `m-${++appended}`,
      });
    }
  };

  const started: InstanceStates[] = [];
  afterEach(async () => {
    await Promise.all(started.splice(0).map((model) => model.stop()));
  });
  const startModel = async (): Promise<{ model: InstanceStates; from: number }> => {
    const model = new InstanceStates(store, logger);
    started.push(model);
    const from = await model.startFromCheckpoint(checkpoints, 60_000);
    expect(await model.catchUp(10_000)).toBe(true);
    return { model, from };
  };

  it('starts from the checkpoint written at the last stop, catches up the rest, and equals a fold of the whole log', async () => {
    await history(0, 40);
    const first = await startModel();
    expect(first.from).toBe(0); // no checkpoint yet: the whole log
    const position = first.model.position;
    await first.model.stop(); // writes the checkpoint
    started.splice(0);
    expect((await checkpoints.load(INSTANCE_STATES_MODEL))?.position).toBe(position);

    await history(40, 10);
    const second = await startModel();
    expect(second.from).toBe(position); // restored, then caught up from there
    const full = await rebuildInstanceStates(store, logger, second.model.position);
    expect(InstanceStates.sameEntries(second.model.snapshot(), full)).toBe(true);
    expect(second.model.stateOf('CK000004')).toMatchObject({ lifecycle: 'created', resets: 1, linkedNumber: null });
    expect(second.model.resetSequenceOf('CK000004')).toBeGreaterThan(0);
    expect(second.model.stateOf('CK000045')).toMatchObject({ lifecycle: 'logged_out', webhook: { url: 'https://h.example/45', enabled: true } });
    expect([...second.model.all()]).toHaveLength(50);
  });

  it('rebuilds deterministically: the same log gives the same model, equal to the checkpoint', async () => {
    const report = await compareWithCheckpoint(store, checkpoints, logger);
    expect(report).toMatchObject({ equal: true, differing: [] });
    const again = await rebuildInstanceStates(store, logger, report.rebuilt.position);
    expect(again.body).toBe(report.rebuilt.body);
  });

  it('reports the instances where a checkpoint differs from the log', async () => {
    const stored = (await checkpoints.load(INSTANCE_STATES_MODEL))!;
    const entries = JSON.parse(stored.body) as Array<[string, { state: { lifecycle: string } }]>;
    entries[3]![1].state.lifecycle = 'failed';
    await checkpoints.replace({ ...stored, body: JSON.stringify(entries) });
    const report = await compareWithCheckpoint(store, checkpoints, logger);
    expect(report.equal).toBe(false);
    expect(report.differing).toEqual([entries[3]![0]]);
    await checkpoints.replace(report.rebuilt); // the repair `--write` does
    expect((await compareWithCheckpoint(store, checkpoints, logger)).equal).toBe(true);
  });

  it('ignores a checkpoint of another log or another model version and folds from the beginning', async () => {
    const stored = (await checkpoints.load(INSTANCE_STATES_MODEL))!;
    await checkpoints.replace({ ...stored, commandId: 'a-command-of-another-log' });
    expect((await startModel()).from).toBe(0);
    await checkpoints.replace({ ...stored, modelVersion: stored.modelVersion + 1 });
    const { model, from } = await startModel();
    expect(from).toBe(0);
    expect([...model.all()]).toHaveLength(50);
  });

  it('says a checkpoint the services cannot restore is unusable, and why, instead of comparing it (equal or all differing)', async () => {
    const stored = (await checkpoints.load(INSTANCE_STATES_MODEL))!;
    // The same entries under another command id: "equals" before, though every service ignored it.
    await checkpoints.replace({ ...stored, commandId: 'a-command-of-another-log' });
    const otherLog = await compareWithCheckpoint(store, checkpoints, logger);
    expect(otherLog).toMatchObject({ equal: false, differing: [], unusable: expect.stringContaining('another commit at its position') });
    // Made by the model version before: every instance "differed" before, though nothing was wrong.
    await checkpoints.replace({ ...stored, modelVersion: stored.modelVersion - 1 });
    const older = await compareWithCheckpoint(store, checkpoints, logger);
    expect(older).toMatchObject({
      equal: false,
      differing: [],
      unusable: `it was made by model version ${stored.modelVersion - 1}; this release folds version ${stored.modelVersion}`,
    });
    // Fits the log but its body does not restore: the services skip it; the CLI failed on it (exit 2).
    await checkpoints.replace({ ...stored, body: '{"not": "entries"' });
    expect(await compareWithCheckpoint(store, checkpoints, logger)).toMatchObject({ equal: false, unusable: "its body cannot be read as the model's entries" });
    await checkpoints.replace(older.rebuilt); // the repair `--write` does
    expect(await compareWithCheckpoint(store, checkpoints, logger)).toMatchObject({ equal: true, unusable: null });
  });

  it('folds from the beginning past a checkpoint that fits but does not restore, instead of failing to start', async () => {
    const stored = (await checkpoints.load(INSTANCE_STATES_MODEL))!;
    await checkpoints.replace({ ...stored, body: '{"not": "entries"' });
    const { model, from } = await startModel();
    expect(from).toBe(0);
    expect([...model.all()]).toHaveLength(50);
  });
});
