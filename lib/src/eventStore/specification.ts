import { deepStrictEqual, fail } from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { AppError, type ErrorKind } from '../errors';
import type { Commit, EventStore, NewEvent } from './port';

/** A commit already in the store before the action runs: its events are appended as one commit. */
export interface GivenCommit {
  stream: string;
  events: NewEvent[];
}

/**
 * An event the action should have appended. `occurredAt` is compared only when the expectation asks for it
 * (`checkOccurredAt`), because most use cases stamp events with the wall clock.
 */
export interface ExpectedEvent {
  type: string;
  data: Record<string, unknown>;
  occurredAt?: string;
}

export interface ExpectedCommit {
  stream: string;
  events: ExpectedEvent[];
}

export interface ThenExpected<A> {
  /** Every commit the action appended, in order; `[]` means it appended nothing. */
  commits: ExpectedCommit[];
  /** The action's answer, compared deeply; left out, the answer is not checked (it is returned for jest checks). */
  answer?: A;
  checkOccurredAt?: boolean;
}

export interface ThrowsExpected {
  kind: ErrorKind;
  code: string;
  /** What the action appended before it threw; by default nothing, since a refused command stores no fact. */
  commits?: ExpectedCommit[];
}

/** What `then` hands back, for checks the expectation cannot express (ids the action minted, parts of views). */
export interface Outcome<A> {
  answer: A;
  commits: Commit[];
}

export interface When<A> {
  then(expected: ThenExpected<A> | ((answer: A) => ThenExpected<A>)): Promise<Outcome<A>>;
  thenThrows(expected: ThrowsExpected): Promise<AppError>;
}

export interface Given {
  when<A>(action: () => Promise<A>): When<A>;
}

/** Reads every commit after `after`: the pattern `>` matches every stream. */
const commitsAfter = async (store: EventStore, after: number): Promise<Commit[]> => {
  const commits: Commit[] = [];
  for (let from: number | null = after + 1; from !== null;) {
    const page = await store.readPattern('>', from, 1_000);
    commits.push(...page.commits);
    from = page.nextSequence;
  }
  return commits;
};

/** The comparable part of a commit: its stream and its events' types, data and, if asked, times. */
const comparable = (commit: ExpectedCommit, checkOccurredAt: boolean): ExpectedCommit => ({
  stream: commit.stream,
  events: commit.events.map(({ type, data, occurredAt }) => (checkOccurredAt ? { type, data, occurredAt } : { type, data })),
});

const assertCommits = (actual: Commit[], expected: ExpectedCommit[], checkOccurredAt = false): void =>
  deepStrictEqual(
    actual.map((c) => comparable(c, checkOccurredAt)),
    expected.map((c) => comparable(c, checkOccurredAt)),
    'the commits the action appended differ from the expected ones',
  );

/**
 * Given/when/then for a use case on an event store (Emmett's `DeciderSpecification`, one level up): the given
 * commits are appended, the action runs against services built on the same store, then the commits it appended
 * and its answer (or the AppError it threw) are checked. Assertions use `node:assert`, so the helper needs no test
 * runner and any runner reports its failures. Nothing is appended until `then` or `thenThrows` is awaited, and the
 * action's commits are told apart by sequence, so a store serves one specification at a time.
 *
 * @example
 * const store = new InMemoryEventStore();
 * const service = new InstancesService({ store, … });
 * await StoreSpecification.for(store)({ stream: instanceStream(ID), events: [created] })
 *   .when(() => service.reset('acme', ID, 'cmd-2'))
 *   .then({ commits: [{ stream: instanceStream(ID), events: [{ type: 'InstanceReset', data: {} }] }] });
 */
export const StoreSpecification = {
  for:
    (store: EventStore) =>
    (...history: GivenCommit[]): Given => ({
      when: <A>(action: () => Promise<A>): When<A> => {
        /** Appends the history, runs the action, and answers what it did (its result or error) and appended. */
        const run = async (): Promise<{ result: { answer: A } | { error: unknown }; commits: Commit[] }> => {
          for (const { stream, events } of history) {
            await store.append(stream, events, { expectedVersion: 'any', commandId: `given-${randomUUID()}` });
          }
          const before = await store.version('>');
          let result: { answer: A } | { error: unknown };
          try {
            result = { answer: await action() };
          } catch (error) {
            result = { error };
          }
          return { result, commits: await commitsAfter(store, before) };
        };
        return {
          then: async (expected) => {
            const { result, commits } = await run();
            // The unexpected error itself is the most useful report (its stack points at the broken rule).
            if ('error' in result) throw new Error(`expected an answer, but the action threw ${String(result.error)}`, { cause: result.error });
            const resolved = typeof expected === 'function' ? expected(result.answer) : expected;
            assertCommits(commits, resolved.commits, resolved.checkOccurredAt);
            if ('answer' in resolved) deepStrictEqual(result.answer, resolved.answer, 'the answer differs from the expected one');
            return { answer: result.answer, commits };
          },
          thenThrows: async (expected) => {
            const { result, commits } = await run();
            if (!('error' in result)) fail(`expected an error ${expected.code}, but the action answered ${JSON.stringify(result.answer)}`);
            const { error } = result;
            if (!(error instanceof AppError)) throw new Error(`expected an AppError ${expected.code}, but the action threw ${String(error)}`, { cause: error });
            deepStrictEqual({ kind: error.kind, code: error.code }, { kind: expected.kind, code: expected.code }, error.message);
            assertCommits(commits, expected.commits ?? []);
            return error;
          },
        };
      },
    }),
};
