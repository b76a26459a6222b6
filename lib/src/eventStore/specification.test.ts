import { AssertionError } from 'node:assert';
import { conflict } from '../errors';
import { InMemoryEventStore } from './inMemoryEventStore';
import type { NewEvent } from './port';
import { StoreSpecification } from './specification';

const T1 = '2026-11-22T10:00:00.000Z';
const T2 = '2026-11-22T11:00:00.000Z';
const event = (type: string, data: Record<string, unknown> = {}, occurredAt = T1): NewEvent => ({ type, schemaVersion: 1, occurredAt, data });

/** A tiny use case: opens a counter once, answers its stream's version. */
const open = async (store: InMemoryEventStore, id: string, at = T2): Promise<number> => {
  const stream = `counter.${id}`;
  if ((await store.version(stream)) > 0) throw conflict('already_open', 'counter already open');
  return (await store.append(stream, [event('Opened', { id }, at)], { expectedVersion: 0, commandId: `open-${id}` })).version;
};

describe('StoreSpecification', () => {
  let store: InMemoryEventStore;
  let given: ReturnType<typeof StoreSpecification.for>;
  beforeEach(() => {
    store = new InMemoryEventStore();
    given = StoreSpecification.for(store);
  });

  describe('then', () => {
    it('passes when the action appends the expected commits and answers the expected value, ignoring times', async () => {
      const outcome = await given({ stream: 'counter.a', events: [event('Opened', { id: 'a' })] })
        .when(() => open(store, 'b'))
        .then({ commits: [{ stream: 'counter.b', events: [{ type: 'Opened', data: { id: 'b' } }] }], answer: 2 });
      // The given commit is history, not something the action appended.
      expect(outcome.commits.map((c) => c.sequence)).toEqual([2]);
      expect(outcome.answer).toBe(2);
    });

    it('builds the expectation from the answer when given a function (ids the action minted)', async () => {
      await given()
        .when(async () => `b${await open(store, 'b')}`)
        .then((answer) => ({ commits: [{ stream: 'counter.b', events: [{ type: 'Opened', data: { id: answer.slice(0, 1) } }] }] }));
    });

    it('fails when the data, the stream, the order or the number of commits differ', async () => {
      const opened = (id: string, stream = `counter.${id}`) => ({ stream, events: [{ type: 'Opened', data: { id } }] });
      const wrong = [[opened('b'), opened('x', 'counter.c')], [opened('b'), opened('c', 'counter.x')], [opened('c'), opened('b')], [opened('b')]];
      for (const commits of wrong) {
        store = new InMemoryEventStore();
        const action = StoreSpecification.for(store)().when(async () => [await open(store, 'b'), await open(store, 'c')]);
        await expect(action.then({ commits })).rejects.toThrow(AssertionError);
      }
      store = new InMemoryEventStore();
      await StoreSpecification.for(store)()
        .when(async () => [await open(store, 'b'), await open(store, 'c')])
        .then({ commits: [opened('b'), opened('c')], answer: [1, 2] });
    });

    it('fails when the answer differs', async () => {
      await expect(
        given()
          .when(() => open(store, 'b'))
          .then({ commits: [{ stream: 'counter.b', events: [{ type: 'Opened', data: { id: 'b' } }] }], answer: 7 }),
      ).rejects.toThrow('the answer differs');
    });

    it('compares times only when asked', async () => {
      const commits = [{ stream: 'counter.b', events: [{ type: 'Opened', data: { id: 'b' }, occurredAt: T1 }] }];
      await given()
        .when(() => open(store, 'b', T2))
        .then({ commits });
      store = new InMemoryEventStore();
      await expect(
        StoreSpecification.for(store)()
          .when(() => open(store, 'b', T2))
          .then({ commits, checkOccurredAt: true }),
      ).rejects.toThrow(AssertionError);
    });

    it('reports an unexpected error with the error as its cause', async () => {
      const failure = await given({ stream: 'counter.b', events: [event('Opened')] })
        .when(() => open(store, 'b'))
        .then({ commits: [] })
        .catch((error: unknown) => error);
      expect(failure).toBeInstanceOf(Error);
      expect((failure as Error).cause).toMatchObject({ code: 'already_open' });
    });
  });

  describe('thenThrows', () => {
    it("passes on the AppError's kind and code when nothing was appended, and hands the error back", async () => {
      const error = await given({ stream: 'counter.b', events: [event('Opened')] })
        .when(() => open(store, 'b'))
        .thenThrows({ kind: 'conflict', code: 'already_open' });
      expect(error.message).toBe('counter already open');
    });

    it('fails on another code or kind', async () => {
      const history = { stream: 'counter.b', events: [event('Opened')] };
      await expect(
        given(history)
          .when(() => open(store, 'b'))
          .thenThrows({ kind: 'conflict', code: 'other' }),
      ).rejects.toThrow(AssertionError);
      store = new InMemoryEventStore();
      await expect(
        StoreSpecification.for(store)(history)
          .when(() => open(store, 'b'))
          .thenThrows({ kind: 'not_found', code: 'already_open' }),
      ).rejects.toThrow(AssertionError);
    });

    it('fails when the action answers, or throws something that is not an AppError', async () => {
      await expect(
        given()
          .when(() => open(store, 'b'))
          .thenThrows({ kind: 'conflict', code: 'already_open' }),
      ).rejects.toThrow('expected an error already_open, but the action answered 1');
      await expect(
        given()
          .when(() => Promise.reject(new TypeError('boom')))
          .thenThrows({ kind: 'conflict', code: 'already_open' }),
      ).rejects.toThrow('expected an AppError already_open, but the action threw TypeError: boom');
    });

    it('fails when the action appended before it threw, unless that commit is expected', async () => {
      const appendThenThrow = async (): Promise<never> => {
        await open(store, 'c');
        throw conflict('late', 'refused after appending');
      };
      await expect(given().when(appendThenThrow).thenThrows({ kind: 'conflict', code: 'late' })).rejects.toThrow(AssertionError);
      store = new InMemoryEventStore();
      await StoreSpecification.for(store)()
        .when(appendThenThrow)
        .thenThrows({ kind: 'conflict', code: 'late', commits: [{ stream: 'counter.c', events: [{ type: 'Opened', data: { id: 'c' } }] }] });
    });
  });
});
