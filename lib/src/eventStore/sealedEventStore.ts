import { isSealedContent, openContent, sealContent, type ContentKeys } from '../contentKeys';
import { erasedContent, putContent, SEALED_KEY, takeContent } from '../events/sealedFields';
import { upcastEvent } from '../events/upcasters';
import { instanceIdOf } from '../nats/topology';
import type {
  AppendOptions,
  AppendResult,
  Commit,
  Delivery,
  EventStore,
  NewEvent,
  ReadPage,
  RecordedEvent,
  ScheduleExpectation,
  SubscribeOptions,
  Subscription,
} from './port';

/** What a ciphertext is bound to: it opens only in the event it was written for. */
const placeOf = (stream: string, type: string): string => `${stream}\u0000${type}`;

/** The commit with its events' sealed content unopened: their content fields stay null (`SubscribeOptions.content` false). */
const withoutContent = (commit: Commit): Commit => {
  if (!commit.events.some((event) => SEALED_KEY in event.data)) return commit;
  const events = commit.events.map((event): RecordedEvent => {
    if (!(SEALED_KEY in event.data)) return event;
    const rest = { ...event.data };
    delete rest[SEALED_KEY];
    return { ...event, ...upcastEvent(event.type, event.schemaVersion, rest) };
  });
  return { ...commit, events };
};

/**
 * The event store with message content sealed: an event's content fields (`SEALED_FIELDS`) are encrypted with its
 * instance's data key as it is appended, and opened as it is read, so every reader (history, export, status,
 * read models, the send path, webhooks, replays, live events) sees plaintext and none knows about keys. Once the key
 * is destroyed (erasure) the same events read with their content `null` and `erased: true`, and everything else
 * (type, time, ids, numbers) as it was: no event is ever rewritten. Events stored before sealing existed (no
 * `$sealed` field) read as they were written. Wraps either adapter.
 */
export class SealedEventStore implements EventStore {
  constructor(
    private readonly inner: EventStore,
    private readonly keys: ContentKeys,
  ) {}

  async append(stream: string, events: NewEvent[], options: AppendOptions): Promise<AppendResult> {
    return this.inner.append(stream, await Promise.all(events.map((event) => this.seal(stream, event))), options);
  }

  async schedule(stream: string, events: NewEvent[], at: Date, expected?: ScheduleExpectation): Promise<void> {
    return this.inner.schedule(stream, await Promise.all(events.map((event) => this.seal(stream, event))), at, expected);
  }

  get schedules(): boolean {
    return this.inner.schedules;
  }

  version(streamOrPattern: string): Promise<number> {
    return this.inner.version(streamOrPattern);
  }

  async readStream(stream: string, afterVersion?: number): Promise<Commit[]> {
    return this.openAll(await this.inner.readStream(stream, afterVersion));
  }

  async readPattern(pattern: string, fromSequence: number, limit: number): Promise<ReadPage> {
    const page = await this.inner.readPattern(pattern, fromSequence, limit);
    return { ...page, commits: await this.openAll(page.commits) };
  }

  async *scanPattern(pattern: string, fromSequence: number): AsyncIterable<Commit> {
    for await (const commit of this.inner.scanPattern(pattern, fromSequence)) yield await this.openCommit(commit);
  }

  async subscribe(pattern: string, options?: SubscribeOptions): Promise<Subscription> {
    const subscription = await this.inner.subscribe(pattern, options);
    const opened = async function* (store: SealedEventStore): AsyncGenerator<Delivery> {
      for await (const delivery of subscription) {
        const commit = options?.content === false ? withoutContent(delivery.commit) : await store.openCommit(delivery.commit);
        // A commit with nothing sealed is handed on as delivered: no new object per delivery.
        yield commit === delivery.commit ? delivery : { ...delivery, commit };
      }
    };
    return { [Symbol.asyncIterator]: () => opened(this), close: () => subscription.close() };
  }

  private async seal(stream: string, event: NewEvent): Promise<NewEvent> {
    const split = takeContent(event.type, event.data);
    if (!split) return event;
    const key = await this.keys.current(instanceIdOf(stream));
    return { ...event, data: { ...split.rest, [SEALED_KEY]: sealContent(split.content, key, placeOf(stream, event.type)) } };
  }

  private openAll(commits: Commit[]): Promise<Commit[]> {
    return Promise.all(commits.map(async (commit) => this.openCommit(commit)));
  }

  /** The commit opened: at once when every key it needs is known here (the common case), else after looking them up. */
  private openCommit(commit: Commit): Commit | Promise<Commit> {
    return this.isOpenNow(commit) ?? this.open(commit);
  }

  /** The commit opened without waiting when every key it needs is known here (the common case), else undefined. */
  private isOpenNow(commit: Commit): Commit | undefined {
    let opened: RecordedEvent[] | null = null;
    for (let i = 0; i < commit.events.length; i++) {
      const event = commit.events[i]!;
      const sealed = event.data[SEALED_KEY];
      if (sealed === undefined) continue;
      const key = isSealedContent(sealed) ? this.keys.known(instanceIdOf(commit.stream), sealed.kid) : null;
      if (key === undefined) return undefined;
      opened ??= [...commit.events];
      opened[i] = this.openEvent(event, key);
    }
    return opened ? { ...commit, events: opened } : commit;
  }

  private async open(commit: Commit): Promise<Commit> {
    const instanceId = instanceIdOf(commit.stream);
    const events = await Promise.all(
      commit.events.map(async (event) => {
        const sealed = event.data[SEALED_KEY];
        if (sealed === undefined) return event;
        return this.openEvent(event, isSealedContent(sealed) ? await this.keys.find(instanceId, sealed.kid) : null);
      }),
    );
    return { ...commit, events };
  }

  /** The event with its content opened (or erased, without the key), then upcast to its type's current version. */
  private openEvent(event: RecordedEvent, key: Buffer | null): RecordedEvent {
    const { [SEALED_KEY]: sealed, ...rest } = event.data;
    const data =
      key && isSealedContent(sealed) ? putContent(rest, openContent(sealed, key, placeOf(event.stream, event.type))) : erasedContent(event.type, rest);
    return { ...event, ...upcastEvent(event.type, event.schemaVersion, data) };
  }
}
