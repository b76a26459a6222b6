import {
  ALL_MESSAGES_PATTERN,
  ContentKeys,
  InMemoryEventStore,
  InMemoryKeyBucket,
  Projection,
  SealedEventStore,
  type AppendResult,
  type InstanceEvent,
} from '@wagw/lib';
import type { Connection } from '../../services/sessions/src/connector/port';
import { SandboxPlatform } from '../../services/sessions/src/connector/sandbox';
import { Dispatcher, type Connections, type DispatchOptions } from '../../services/sessions/src/dispatch/dispatcher';
import type { MediaFetcher } from '../../services/sessions/src/media/mediaFetcher';
import { InstanceRegistry } from '../../services/sessions/src/registry/instanceRegistry';
import { SendLedger } from '../../services/sessions/src/registry/sendLedger';
import { testLogger } from './logger';

/** The dispatcher of an application test and what it runs on: started; `stop` after the test. */
export interface DispatchRig {
  keys: ContentKeys;
  /** In-memory, its message content sealed, as in production. */
  store: SealedEventStore;
  registry: InstanceRegistry;
  ledger: SendLedger;
  /** Feeds the ledger from the store. */
  feed: Projection;
  platform: SandboxPlatform;
  dispatcher: Dispatcher;
  /** Another dispatcher on the same store, registry, ledger, media and connections (a replica started after, say). */
  dispatcherWith(options: DispatchOptions): Dispatcher;
  /** This replica's connections, as the session manager keeps them. */
  open: Map<string, Connection>;
  /** Instances whose sends the session manager says wait (a restricted account). */
  paused: Set<string>;
  /** Appends instance events as they come (no version expected). */
  append(stream: string, ...events: InstanceEvent[]): Promise<AppendResult>;
  stop(): Promise<void>;
}

export interface DispatchRigOptions {
  media: MediaFetcher;
  dispatch: DispatchOptions;
  /**
   * The replica's connections, made on the rig's store, registry and platform (a real session manager, say); absent:
   * `open` and `paused`, set by the test.
   */
  connections?: (parts: { store: SealedEventStore; registry: InstanceRegistry; platform: SandboxPlatform }) => Connections;
}

/**
 * The real dispatcher, instance registry, send ledger and sandbox platform on an in-memory store, wired as the
 * sessions service wires them: the one place the dispatcher's application tests build it.
 */
export const dispatchRig = ({ media, dispatch, connections: made }: DispatchRigOptions): DispatchRig => {
  const keys = new ContentKeys(new InMemoryKeyBucket());
  const store = new SealedEventStore(new InMemoryEventStore(), keys);
  const registry = new InstanceRegistry(store, testLogger());
  registry.start();
  const ledger = new SendLedger();
  const feed = new Projection(store, ALL_MESSAGES_PATTERN, (commit) => ledger.apply(commit), testLogger());
  feed.start();
  const platform = new SandboxPlatform({ sentDelayMs: 5, deliveredDelayMs: 10, readDelayMs: 15, qrIntervalMs: 60_000 });
  const open = new Map<string, Connection>();
  const paused = new Set<string>();
  const connections: Connections = made?.({ store, registry, platform }) ?? {
    connected: (id) => open.get(id) ?? null,
    sending: () => undefined,
    sendsPaused: (id) => paused.has(id),
  };
  const dispatchers: Dispatcher[] = [];
  const dispatcherWith = (options: DispatchOptions): Dispatcher => {
    const made = new Dispatcher(store, connections, registry, ledger, media, testLogger(), options);
    dispatchers.push(made);
    return made;
  };
  const dispatcher = dispatcherWith(dispatch);
  return {
    keys,
    store,
    registry,
    ledger,
    feed,
    platform,
    dispatcher,
    dispatcherWith,
    open,
    paused,
    append: (stream, ...events) => store.append(stream, events, { expectedVersion: 'any', commandId: `c-${Math.random()}` }),
    stop: async () => {
      for (const made of dispatchers) await made.stop();
      await registry.stop();
      await feed.stop();
    },
  };
};
