import { asCurrentEvent, handleCommand, type Decider } from './commandHandler';
import { InMemoryEventStore } from './inMemoryEventStore';
import { ExpectedVersionConflictError, type AppendOptions, type AppendResult, type NewEvent } from './port';

/** A register created once: a second create by its owner changes nothing, by anyone else is refused. */
type Created = NewEvent & { type: 'Created'; data: { owner: string } };
type Create = { owner: string };
const register: Decider<Create, Created, string | null> = {
  decide: (command, owner) => {
    if (owner === command.owner) return [];
    if (owner !== null) throw new Error('taken');
    return [{ type: 'Created', schemaVersion: 1, occurredAt: '2026-11-24T00:00:00Z', data: { owner: command.owner } }];
  },
  evolve: (_owner, event) => event.data.owner,
  initialState: () => null,
  upcast: (event) => asCurrentEvent<Created>(event),
};

describe('handleCommand with expectNew (no read before the first append)', () => {
  it('appends a new stream at once', async () => {
    const store = new InMemoryEventStore();
    const result = await handleCommand(store, register, 'R1.register', { owner: 'a' }, { commandId: 'c1', expectNew: true });
    expect(result).toMatchObject({ state: 'a', version: 1 });
    expect(await store.readStream('R1.register')).toHaveLength(1);
  });

  it('on a stream that exists after all, decides on its real state: the same outcome as with the read', async () => {
    const store = new InMemoryEventStore();
    await handleCommand(store, register, 'R1.register', { owner: 'a' }, { commandId: 'c1' });
    // The owner again: nothing appended, the current state answered.
    const again = await handleCommand(store, register, 'R1.register', { owner: 'a' }, { commandId: 'c2', expectNew: true });
    expect(again).toMatchObject({ state: 'a', version: 1, events: [] });
    // Someone else: refused by decide, as without expectNew.
    await expect(handleCommand(store, register, 'R1.register', { owner: 'b' }, { commandId: 'c3', expectNew: true })).rejects.toThrow('taken');
    expect(await store.readStream('R1.register')).toHaveLength(1);
  });

  it('answers a repeated command id as the duplicate it is', async () => {
    const store = new InMemoryEventStore();
    await handleCommand(store, register, 'R1.register', { owner: 'a' }, { commandId: 'c1', expectNew: true });
    const repeat = await handleCommand(store, register, 'R1.register', { owner: 'a' }, { commandId: 'c1', expectNew: true });
    expect(repeat).toMatchObject({ state: 'a', version: 1, events: [] });
  });
});

describe('handleCommand when every retry meets a version conflict', () => {
  /** A store whose every append of an expected version is overtaken by another writer's. */
  class Overtaken extends InMemoryEventStore {
    appends = 0;
    override async append(stream: string, events: NewEvent[], options: AppendOptions): Promise<AppendResult> {
      this.appends++;
      if (options.expectedVersion === 'any') return super.append(stream, events, options);
      throw new ExpectedVersionConflictError(stream, options.expectedVersion);
    }
  }

  it('gives up after maxAttempts with a retryable concurrent_update, the last conflict as its cause', async () => {
    const store = new Overtaken();
    const failure = handleCommand(store, register, 'R1.register', { owner: 'a' }, { commandId: 'c1', maxAttempts: 3 });
    await expect(failure).rejects.toMatchObject({ kind: 'unavailable', code: 'concurrent_update', retryAfterS: 1 });
    await expect(failure).rejects.toHaveProperty('cause', expect.any(ExpectedVersionConflictError));
    expect(store.appends).toBe(3);
  });
});
