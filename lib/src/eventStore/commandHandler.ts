import { concurrentUpdate, isVersionConflict, type Commit, type EventStore, type NewEvent, type RecordedEvent } from './port';

/**
 * A stored event as a domain event of the current schema, for aggregates whose events are all still at version 1
 * (the first schema change adds a real conversion in that aggregate's `upcast`).
 */
export const asCurrentEvent = <E extends NewEvent>(event: RecordedEvent): E => {
  const { type, schemaVersion, occurredAt, data } = event;
  return { type, schemaVersion, occurredAt, data } as E;
};

/** An aggregate as three pure functions, plus `upcast` that turns a stored event (any schema version) into the current shape. */
export interface Decider<Command, Event extends NewEvent, State> {
  decide(command: Command, state: State): Event[];
  evolve(state: State, event: Event): State;
  initialState(): State;
  upcast(event: RecordedEvent): Event;
}

export interface Loaded<State> {
  state: State;
  version: number;
}

/**
 * Remembers recently used aggregates so a command reads only the commits it has not seen. Always checked against
 * the store's version first, so several replicas sharing one store stay correct.
 */
export class AggregateCache<State> {
  private readonly entries = new Map<string, Loaded<State>>();
  constructor(private readonly capacity = 10_000) {}

  get(stream: string): Loaded<State> | undefined {
    const entry = this.entries.get(stream);
    if (entry) {
      this.entries.delete(stream);
      this.entries.set(stream, entry);
    }
    return entry;
  }

  /** Forgets a stream's state (it must be read again). */
  delete(stream: string): void {
    this.entries.delete(stream);
  }

  /** Forgets every stream of the aggregate streams under `prefix` (`<prefix>.…`). */
  deleteUnder(prefix: string): void {
    for (const stream of this.entries.keys()) if (stream.startsWith(`${prefix}.`)) this.entries.delete(stream);
  }

  set(stream: string, entry: Loaded<State>): void {
    this.entries.delete(stream);
    this.entries.set(stream, entry);
    if (this.entries.size > this.capacity) this.entries.delete(this.entries.keys().next().value as string);
  }
}

/** Loads an aggregate's current state: cached state plus the commits appended since. */
export const loadAggregate = async <C, E extends NewEvent, S>(
  store: EventStore,
  decider: Decider<C, E, S>,
  stream: string,
  cache?: AggregateCache<S>,
): Promise<Loaded<S>> => {
  const cached = cache?.get(stream) ?? { state: decider.initialState(), version: 0 };
  const commits = await store.readStream(stream, cached.version);
  if (commits.length === 0) return cached;
  let state = cached.state;
  for (const commit of commits) for (const event of commit.events) state = decider.evolve(state, decider.upcast(event));
  const loaded = { state, version: commits.at(-1)!.sequence };
  cache?.set(stream, loaded);
  return loaded;
};

/**
 * The aggregate as it was at `at`: its commits folded in log order, by the same `evolve` as the current state, up to
 * the first commit holding an event that happened later. A prefix of the log, so always a state that really existed
 * (events of different writers may carry slightly unordered clocks; the log's order is the truth).
 */
export const stateAt = <C, E extends NewEvent, S>(decider: Decider<C, E, S>, commits: Commit[], at: Date): Loaded<S> => {
  let state = decider.initialState();
  let version = 0;
  for (const commit of commits) {
    if (commit.events.some((event) => Date.parse(event.occurredAt) > at.getTime())) break;
    for (const event of commit.events) state = decider.evolve(state, decider.upcast(event));
    version = commit.sequence;
  }
  return { state, version };
};

/** How many times a command is tried when it keeps meeting a version conflict, unless its options say otherwise. */
export const COMMAND_MAX_ATTEMPTS = 10;

export interface CommandHandlerOptions<S> {
  commandId: string;
  cache?: AggregateCache<S>;
  /** How many times a version conflict is retried with fresh state, after a short random pause (default COMMAND_MAX_ATTEMPTS). */
  maxAttempts?: number;
  /**
   * The caller's read model has never seen the stream (a create): the first attempt decides on the initial state
   * and appends expecting an empty stream, without reading it first (a read of a missing stream costs a round trip
   * and a NATS error object: the largest cost of create_instance). A stream that exists after all fails the
   * compare-and-set and is loaded and retried like any conflict, so the result is the same as with the read.
   */
  expectNew?: boolean;
}

/**
 * The one command-handler shape: load -> decide -> append with the command id and the expected version ->
 * on a version conflict only, load again and retry; once the attempts run out, a retryable 503 `concurrent_update`.
 * Returns the state after the command.
 */
export const handleCommand = async <C, E extends NewEvent, S>(
  store: EventStore,
  decider: Decider<C, E, S>,
  stream: string,
  command: C,
  options: CommandHandlerOptions<S>,
): Promise<Loaded<S> & { events: E[] }> => {
  const maxAttempts = options.maxAttempts ?? COMMAND_MAX_ATTEMPTS;
  for (let attempt = 1; ; attempt++) {
    const { state, version } =
      attempt === 1 && options.expectNew ? { state: decider.initialState(), version: 0 } : await loadAggregate(store, decider, stream, options.cache);
    const events = decider.decide(command, state);
    if (events.length === 0) return { state, version, events };
    try {
      const result = await store.append(stream, events, { expectedVersion: version, commandId: options.commandId });
      if (result.duplicate) return { ...(await loadAggregate(store, decider, stream, options.cache)), events: [] };
      const next = { state: events.reduce((s, e) => decider.evolve(s, e), state), version: result.version };
      options.cache?.set(stream, next);
      return { ...next, events };
    } catch (error) {
      if (!isVersionConflict(error)) throw error;
      if (attempt >= maxAttempts) throw concurrentUpdate(error);
      // Writers racing on one aggregate spread out instead of colliding again.
      await new Promise((resolve) => setTimeout(resolve, Math.random() * 5 * attempt));
    }
  }
};
