import { ExpectedVersionConflictError, type Delivery, type EventStore, type NewEvent, type Subscription } from '@wagw/lib';

const event = (type: string, data: Record<string, unknown> = {}): NewEvent => ({
  type,
  schemaVersion: 1,
  occurredAt: '2026-11-22T10:00:00.000Z',
  data,
});

let counter = 0;
const uniqueStream = (suffix = 'instance'): string =>
  `S${Date.now().toString(36)}${(counter++).toString(36)}.${suffix}`.toUpperCase().replace('.INSTANCE', '.instance');

/** Takes the next `n` deliveries from a subscription (bounded by `timeoutMs`). */
export const take = async (subscription: Subscription, n: number, timeoutMs = 5_000): Promise<Delivery[]> => {
  const out: Delivery[] = [];
  const iterator = subscription[Symbol.asyncIterator]();
  const deadline = Date.now() + timeoutMs;
  while (out.length < n) {
    const remaining = deadline - Date.now();
    if (remaining <= 0) throw new Error(`only ${out.length} of ${n} deliveries arrived`);
    let timer: NodeJS.Timeout | undefined;
    const next = await Promise.race([iterator.next(), new Promise<'timeout'>((resolve) => (timer = setTimeout(() => resolve('timeout'), remaining)))]);
    clearTimeout(timer);
    if (next === 'timeout' || next.done) throw new Error(`only ${out.length} of ${n} deliveries arrived`);
    out.push(next.value);
  }
  return out;
};

/**
 * The behaviour every EventStore adapter must have. `open` gives a fresh, empty store; `close` releases it.
 */
export const describeEventStoreContract = (name: string, open: () => Promise<{ store: EventStore; close: () => Promise<void> }>): void => {
  describe(`${name} event store contract`, () => {
    let store: EventStore;
    let close: () => Promise<void>;
    beforeAll(async () => {
      ({ store, close } = await open());
    });
    afterAll(async () => {
      await close();
    });

    it('reports version 0 for a stream that has no commit', async () => {
      expect(await store.version(uniqueStream())).toBe(0);
    });

    it('appends a commit of several events and reads them back in order with their metadata', async () => {
      const stream = uniqueStream();
      const result = await store.append(stream, [event('A', { n: 1 }), event('B', { n: 2 })], {
        expectedVersion: 0,
        commandId: `${stream}-1`,
      });
      expect(result.duplicate).toBe(false);
      expect(await store.version(stream)).toBe(result.version);
      const commits = await store.readStream(stream);
      expect(commits).toHaveLength(1);
      expect(commits[0]).toMatchObject({ stream, sequence: result.version, commandId: `${stream}-1` });
      expect(commits[0]!.events.map((e) => [e.type, e.data, e.schemaVersion, e.occurredAt, e.sequence])).toEqual([
        ['A', { n: 1 }, 1, '2026-11-22T10:00:00.000Z', result.version],
        ['B', { n: 2 }, 1, '2026-11-22T10:00:00.000Z', result.version],
      ]);
    });

    it('rejects an append whose expected version is stale with a version conflict', async () => {
      const stream = uniqueStream();
      const first = await store.append(stream, [event('A')], { expectedVersion: 0, commandId: `${stream}-1` });
      await store.append(stream, [event('B')], { expectedVersion: first.version, commandId: `${stream}-2` });
      await expect(store.append(stream, [event('C')], { expectedVersion: first.version, commandId: `${stream}-3` })).rejects.toBeInstanceOf(
        ExpectedVersionConflictError,
      );
      await expect(store.append(stream, [event('C')], { expectedVersion: 0, commandId: `${stream}-4` })).rejects.toBeInstanceOf(ExpectedVersionConflictError);
      expect((await store.readStream(stream)).map((c) => c.events[0]!.type)).toEqual(['A', 'B']);
    });

    it("appends with expected version 'any' whatever the stream's version", async () => {
      const stream = uniqueStream();
      await store.append(stream, [event('A')], { expectedVersion: 'any', commandId: `${stream}-1` });
      await store.append(stream, [event('B')], { expectedVersion: 'any', commandId: `${stream}-2` });
      expect(await store.readStream(stream)).toHaveLength(2);
    });

    it('appends nothing for a repeated command id and answers the first version', async () => {
      const stream = uniqueStream();
      const first = await store.append(stream, [event('A')], { expectedVersion: 0, commandId: `${stream}-same` });
      const again = await store.append(stream, [event('A')], { expectedVersion: 0, commandId: `${stream}-same` });
      expect(again).toEqual({ version: first.version, duplicate: true });
      expect(await store.readStream(stream)).toHaveLength(1);
    });

    it('lets exactly one of many concurrent appends at the same version win', async () => {
      const stream = uniqueStream();
      const results = await Promise.allSettled(
        Array.from({ length: 20 }, (_, i) => store.append(stream, [event('Race', { i })], { expectedVersion: 0, commandId: `${stream}-${i}` })),
      );
      expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
      const rejected = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
      expect(rejected.every((r) => r.reason instanceof ExpectedVersionConflictError)).toBe(true);
      expect(await store.readStream(stream)).toHaveLength(1);
    });

    it('reads only the commits after a given version', async () => {
      const stream = uniqueStream();
      const a = await store.append(stream, [event('A')], { expectedVersion: 0, commandId: `${stream}-1` });
      await store.append(stream, [event('B')], { expectedVersion: a.version, commandId: `${stream}-2` });
      expect((await store.readStream(stream, a.version)).map((c) => c.events[0]!.type)).toEqual(['B']);
      expect(await store.readStream(stream, await store.version(stream))).toEqual([]);
    });

    it('reads the streams matching a pattern page by page, oldest first', async () => {
      const id = uniqueStream().split('.')[0]!;
      let version = 0;
      for (let i = 0; i < 5; i++) {
        version = (await store.append(`${id}.instance`, [event('I', { i })], { expectedVersion: version, commandId: `${id}-i${i}` })).version;
        await store.append(`${id}.message.M${i}`, [event('M', { i })], { expectedVersion: 0, commandId: `${id}-m${i}` });
      }
      await store.append(`${id}X.instance`, [event('Other')], { expectedVersion: 0, commandId: `${id}-other` });
      const first = await store.readPattern(`${id}.>`, 0, 4);
      expect(first.commits.map((c) => c.events[0]!.type)).toEqual(['I', 'M', 'I', 'M']);
      expect(first.nextSequence).toBe(first.commits[3]!.sequence + 1);
      const rest = await store.readPattern(`${id}.>`, first.nextSequence!, 100);
      expect(rest.commits).toHaveLength(6);
      expect(rest.nextSequence).toBeNull();
      const messages = await store.readPattern(`${id}.message.*`, 0, 100);
      expect(messages.commits.map((c) => c.events[0]!.data)).toEqual([0, 1, 2, 3, 4].map((i) => ({ i })));
      expect(await store.version(`${id}.message.*`)).toBe(messages.commits[4]!.sequence);
    });

    it('scans the streams matching a pattern up to the last commit there was when the scan started', async () => {
      const id = uniqueStream().split('.')[0]!;
      for (let i = 0; i < 3; i++) await store.append(`${id}.message.M${i}`, [event('M', { i })], { expectedVersion: 0, commandId: `${id}-m${i}` });
      await store.append(`${id}X.instance`, [event('Other')], { expectedVersion: 0, commandId: `${id}-other` });
      const seen: unknown[] = [];
      let from = 0;
      for await (const commit of store.scanPattern(`${id}.>`, 0)) {
        seen.push(commit.events[0]!.data);
        from = commit.sequence;
        // A commit appended during the scan is not part of it: the scan ends where the log ended when it began.
        if (seen.length === 1) await store.append(`${id}.message.late`, [event('Late')], { expectedVersion: 0, commandId: `${id}-late` });
      }
      expect(seen).toEqual([{ i: 0 }, { i: 1 }, { i: 2 }]);
      const rest: string[] = [];
      for await (const commit of store.scanPattern(`${id}.>`, from + 1)) rest.push(commit.events[0]!.type);
      expect(rest).toEqual(['Late']);
      // Breaking off a scan ends it; the store reads on.
      const firstTwo: number[] = [];
      for await (const commit of store.scanPattern(`${id}.>`, 0)) if (firstTwo.push(commit.sequence) === 2) break;
      expect(firstTwo).toHaveLength(2);
      expect((await store.readPattern(`${id}.>`, 0, 10)).commits).toHaveLength(4);
    });

    it('delivers past and live commits to a subscription, in order', async () => {
      const id = uniqueStream().split('.')[0]!;
      await store.append(`${id}.instance`, [event('Before')], { expectedVersion: 0, commandId: `${id}-1` });
      const subscription = await store.subscribe(`${id}.>`);
      try {
        await store.append(`${id}.message.M1`, [event('After')], { expectedVersion: 0, commandId: `${id}-2` });
        const got = await take(subscription, 2);
        expect(got.map((d) => d.commit.events[0]!.type)).toEqual(['Before', 'After']);
      } finally {
        await subscription.close();
      }
    });

    it('resumes a durable subscription after the last acked commit and redelivers what was not acked', async () => {
      const id = uniqueStream().split('.')[0]!;
      const durableName = `d-${id}`;
      for (let i = 0; i < 3; i++) {
        await store.append(`${id}.message.M${i}`, [event('M', { i })], { expectedVersion: 0, commandId: `${id}-${i}` });
      }
      const first = await store.subscribe(`${id}.>`, { durableName, ackWaitMs: 1_000 });
      const [a, b] = await take(first, 2);
      a!.ack();
      b!.nak();
      await new Promise((resolve) => setTimeout(resolve, 200));
      await first.close();
      const second = await store.subscribe(`${id}.>`, { durableName, ackWaitMs: 1_000 });
      try {
        const seen = new Set<number>();
        const deliveries = await take(second, 2);
        for (const d of deliveries) {
          seen.add(d.commit.events[0]!.data.i as number);
          d.ack();
        }
        expect([...seen].sort()).toEqual([1, 2]);
      } finally {
        await second.close();
      }
    });

    it('hands out only commits of the types asked for, and acks the others of a durable subscription', async () => {
      const id = uniqueStream().split('.')[0]!;
      const durableName = `t-${id}`;
      const types = ['Wanted', 'AlsoWanted'];
      await store.append(`${id}.message.M0`, [event('Skipped', { i: 0 })], { expectedVersion: 0, commandId: `${id}-0` });
      await store.append(`${id}.message.M1`, [event('Wanted', { i: 1 })], { expectedVersion: 0, commandId: `${id}-1` });
      await store.append(`${id}.message.M2`, [event('Skipped', { i: 2 }), event('AlsoWanted', { i: 2 })], { expectedVersion: 0, commandId: `${id}-2` });
      await store.append(`${id}.message.M3`, [event('Skipped', { i: 3 })], { expectedVersion: 0, commandId: `${id}-3` });
      await store.append(`${id}.message.M4`, [event('Wanted', { i: 4 })], { expectedVersion: 0, commandId: `${id}-4` });
      const ordered = await store.subscribe(`${id}.>`, { types });
      try {
        expect((await take(ordered, 3)).map((d) => d.commit.events[0]!.data.i)).toEqual([1, 2, 4]);
      } finally {
        await ordered.close();
      }
      const first = await store.subscribe(`${id}.>`, { durableName, ackWaitMs: 1_000, types });
      const got = await take(first, 3);
      for (const d of got) d.ack();
      expect(got.map((d) => d.commit.events[0]!.data.i)).toEqual([1, 2, 4]);
      await first.close();
      // After the ack wait: nothing was left unacked, the skipped commits neither.
      await new Promise((resolve) => setTimeout(resolve, 1_200));
      const again = await store.subscribe(`${id}.>`, { durableName, ackWaitMs: 1_000 });
      try {
        await expect(take(again, 1, 500)).rejects.toThrow('only 0 of 1 deliveries arrived');
      } finally {
        await again.close();
      }
    });

    it('appends a scheduled commit once its time has come, not before, to a subscriber too, without an expected version', async () => {
      const id = uniqueStream().split('.')[0]!;
      const stream = `${id}.delivery.D1.due`;
      await store.append(stream, [event('Earlier')], { expectedVersion: 0, commandId: `${id}-0` });
      const subscription = await store.subscribe(`${id}.delivery.>`, { types: ['Due'] });
      try {
        const scheduledAt = Date.now();
        await store.schedule(stream, [event('Due', { n: 1 })], new Date(scheduledAt + 700));
        expect((await store.readStream(stream)).map((c) => c.events[0]!.type)).toEqual(['Earlier']);
        const [due] = await take(subscription, 1, 5_000);
        expect(Date.now() - scheduledAt).toBeGreaterThanOrEqual(600);
        expect(due!.commit).toMatchObject({ stream, commandId: '' });
        expect(due!.commit.events.map((e) => [e.type, e.data])).toEqual([['Due', { n: 1 }]]);
        expect((await store.readStream(stream)).map((c) => c.events[0]!.type)).toEqual(['Earlier', 'Due']);
        // Schedules are not streams: a pattern over everything sees only what was appended.
        expect((await store.readPattern(`${id}.>`, 0, 10)).commits.map((c) => c.stream)).toEqual([stream, stream]);
      } finally {
        await subscription.close();
      }
    });

    it('refuses a schedule made from a version of another stream that has moved on since', async () => {
      const id = uniqueStream().split('.')[0]!;
      const record = `${id}.delivery.D1`;
      const first = await store.append(record, [event('Attempted')], { expectedVersion: 0, commandId: `${id}-a1` });
      await store.append(record, [event('Attempted')], { expectedVersion: first.version, commandId: `${id}-a2` });
      await expect(
        store.schedule(`${record}.due`, [event('Due', { n: 1 })], new Date(Date.now() + 60_000), { stream: record, version: first.version }),
      ).rejects.toThrow(ExpectedVersionConflictError);
      await expect(
        store.schedule(`${record}.due`, [event('Due', { n: 2 })], new Date(Date.now() + 60_000), { stream: record, version: await store.version(record) }),
      ).resolves.toBeUndefined();
    });

    it("replaces a stream's pending schedule with a later one, and takes a time already past at once", async () => {
      const id = uniqueStream().split('.')[0]!;
      await store.schedule(`${id}.delivery.D1.due`, [event('Due', { n: 1 })], new Date(Date.now() + 400));
      await store.schedule(`${id}.delivery.D1.due`, [event('Due', { n: 2 })], new Date(Date.now() + 800));
      await store.schedule(`${id}.delivery.D2.due`, [event('Due', { n: 3 })], new Date(Date.now() - 60_000));
      const subscription = await store.subscribe(`${id}.>`);
      try {
        // 15 s: on the 3-node cluster beside a CPU burner (a slow CI machine) neither had come within 5 s once.
        const got = await take(subscription, 2, 15_000);
        expect(got.map((d) => [d.commit.stream, d.commit.events[0]!.data.n])).toEqual([
          [`${id}.delivery.D2.due`, 3],
          [`${id}.delivery.D1.due`, 2],
        ]);
        // The replaced schedule never comes.
        await new Promise((resolve) => setTimeout(resolve, 1_000));
        expect((await store.readPattern(`${id}.>`, 0, 10)).commits).toHaveLength(2);
      } finally {
        await subscription.close();
      }
    });
  });
};
