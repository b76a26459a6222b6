import {
  ContentKeys,
  createDeliveryClient,
  InMemoryEventStore,
  InMemoryKeyBucket,
  InMemoryWebhookSecretStore,
  instanceEvent,
  instanceStream,
  messageEvent,
  messageStream,
  SealedEventStore,
  type AppendOptions,
  type AppendResult,
  type Commit,
  type DeliveryClient,
  type EventStore,
  type NewEvent,
  type WebhookSecretStore,
} from '@wagw/lib';
import { EndpointDirectory } from '../../services/webhooks/src/endpoints/endpointDirectory';
import { Attempter } from '../../services/webhooks/src/worker/attempter';
import { CircuitBreaker } from '../../services/webhooks/src/worker/circuitBreaker';
import { Deliverer, type DelivererOptions } from '../../services/webhooks/src/worker/deliverer';
import { Router, type RouterOptions } from '../../services/webhooks/src/worker/router';
import { GatedClient } from './gatedClient';
import { testLogger } from './logger';
import { sleep } from './wait';
import { WebhookReceiver } from './webhookReceiver';

// The webhooks worker's application tests wire the real router, deliverer, attempter and endpoint directory on an
// in-memory store the same way; this is the one place they do it, so a test states only what it is about.

/** A store that refuses the next `failing` appends, as NATS does for a moment while it fails over. */
export class FlakyStore extends InMemoryEventStore {
  failing = 0;
  override async append(stream: string, events: NewEvent[], options: AppendOptions): Promise<AppendResult> {
    if (this.failing > 0) {
      this.failing--;
      throw new Error('nats: timeout');
    }
    return super.append(stream, events, options);
  }
}

/** An in-memory store with message content sealed under `keys`, as in production (destroying a key erases). */
export const sealedStore = (keys: ContentKeys): SealedEventStore => new SealedEventStore(new InMemoryEventStore(), keys);

/** Appends events as they come (no version expected), each call a command of its own. */
export const appendTo = (store: EventStore, stream: string, ...events: NewEvent[]): Promise<AppendResult> =>
  store.append(stream, events, { expectedVersion: 'any', commandId: `c-${Math.random()}` });

/** The instance created at `at` with its webhook at `url` (`enabled` as given). */
export const configureWebhook = async (store: EventStore, instanceId: string, url: string, at: string, enabled = true): Promise<void> => {
  await appendTo(store, instanceStream(instanceId), instanceEvent('InstanceCreated', at, { instance_id: instanceId, account: 'acme' }));
  await appendTo(store, instanceStream(instanceId), instanceEvent('WebhookConfigured', at, { url, enabled }));
};

/** When the messages of `sendMessages` were sent: fixed, as no test looks at it. */
const SENT_AT = '2026-11-23T10:00:00.000Z';

/** A message the instance sent, as the router is handed it: its commit and its webhook (and delivery) id. */
export interface Sent {
  commit: Commit;
  id: string;
}

/** `count` messages sent by the instance (m`from`, m`from + 1`, …), appended in order. */
export const sendMessages = async (store: EventStore, instanceId: string, count: number, from = 1): Promise<Sent[]> => {
  const out: Sent[] = [];
  for (let i = from; i < from + count; i++) {
    const { version } = await appendTo(
      store,
      messageStream(instanceId, `m${i}`),
      messageEvent('MessageSent', SENT_AT, { message_id: `m${i}`, to: '4915100000001' }),
    );
    const [commit] = (await store.readPattern('>', version, 1)).commits as [Commit];
    out.push({ commit, id: `evt_${version}_0` });
  }
  return out;
};

/**
 * Hands commits to a router in order, as the sequencer does; each answer (`ack 7`, `nak 7`) lands in `answers`.
 * `arrived` is the sequencer's mark per commit (absent: a sender of an earlier release, taken as arrived).
 */
export const handTo = (router: Router, instanceId: string, commits: Commit[], answers: string[], arrived?: boolean[]): void => {
  commits.forEach((commit, i) => {
    const delivery = {
      commit,
      deliveryCount: 1,
      ack: () => void answers.push(`ack ${commit.sequence}`),
      nak: () => void answers.push(`nak ${commit.sequence}`),
      inProgress: () => undefined,
    };
    router.handle(instanceId, delivery, arrived?.[i]);
  });
};

/** The events of a stream as type and data: what a test compares records with. */
export const storedEvents = async (store: EventStore, stream: string): Promise<Array<{ type: string; data: Record<string, unknown> }>> =>
  (await store.readStream(stream)).flatMap((c) => c.events.map((e) => ({ type: e.type, data: e.data })));

/** Waits until `ok` holds or `timeoutMs` passes; the caller asserts what it needs after. */
export const waitFor = async (ok: () => boolean, timeoutMs: number): Promise<void> => {
  for (const deadline = Date.now() + timeoutMs; !ok() && Date.now() < deadline;) await sleep(10);
};

/** An attempter and the circuit breaker it reports to: a replica's own, nothing shared with another's. */
export interface AttemptParts {
  attempter: Attempter;
  breaker: CircuitBreaker;
}

export interface AttemptPolicy {
  /** Waits before attempts 1, 2, …; default: at once, 5 s, 30 s (a test sees the first attempt only). */
  schedule?: number[];
  /** Failures that open the breaker; default 5. */
  threshold?: number;
}

/** An attempter as worker `w1` with no jitter (random 0.5) on the real clock. */
export const attemptParts = (
  secrets: WebhookSecretStore,
  client: DeliveryClient,
  { schedule = [0, 5_000, 30_000], threshold = 5 }: AttemptPolicy = {},
): AttemptParts => {
  const breaker = new CircuitBreaker(threshold, 30_000);
  return { breaker, attempter: new Attempter(secrets, client, breaker, { schedule, random: () => 0.5 }, 'w1', () => new Date()) };
};

/** What a router or deliverer runs on: instance events and deliveries in `store` unless `deliveries` says otherwise. */
export interface Wiring extends AttemptParts {
  store: EventStore;
  endpoints: EndpointDirectory;
  deliveries?: EventStore;
}

export const routerOn = ({ store, deliveries = store, endpoints, attempter, breaker }: Wiring, options: RouterOptions): Router =>
  new Router(store, deliveries, endpoints, attempter, breaker, testLogger(), options);

/** A deliverer, not started; by default 4 lanes pulling 16 jobs, no jitter, on the real clock. */
export const delivererOn = ({ store, deliveries = store, endpoints, attempter, breaker }: Wiring, options: Partial<DelivererOptions> = {}): Deliverer =>
  new Deliverer(deliveries, store, endpoints, attempter, breaker, testLogger(), {
    random: () => 0.5,
    concurrency: 4,
    batch: 16,
    ackWaitMs: 10_000,
    now: () => new Date(),
    ...options,
  });

/** Where a router or deliverer made by a rig differs from the rig's own parts. */
export interface Overrides {
  /** Default: a fresh attempter and breaker, made with the rig's policy. */
  parts?: AttemptParts;
  /** Default: the rig's directory. */
  endpoints?: EndpointDirectory;
  /** Where the deliverer reads and records its jobs; default: the rig's store. */
  deliveries?: EventStore;
}

/**
 * The worker's parts of one test, made before it on a fresh store: its fields are the current test's (read them in
 * a `beforeEach` or a test, not when the describe block is declared). Its functions always use the current ones.
 */
export interface WorkerRig<S extends EventStore, C extends DeliveryClient> {
  readonly instanceId: string;
  /** The content keys `store` was made with (only a sealed store uses them). */
  keys: ContentKeys;
  store: S;
  /** Started; stopped after the test, after every deliverer made with `delivererWith`. */
  endpoints: EndpointDirectory;
  secrets: InMemoryWebhookSecretStore;
  client: C;
  /** `appendTo` the current store. */
  append: (stream: string, ...events: NewEvent[]) => Promise<AppendResult>;
  /** Destroys the instance's content key and records the erasure, as erase_instance_data does; the directory has it. */
  erase: () => Promise<void>;
  /** A fresh attempter and breaker with the rig's policy (`schedule` where a test wants another). */
  attemptParts: (schedule?: number[]) => AttemptParts;
  /** A router of its own (a replica); by default 16 lanes and the client's time-out. */
  routerWith: (options?: Partial<RouterOptions>, overrides?: Overrides) => Router;
  /** A deliverer, not started (see `delivererOn`); stopped after the test. */
  delivererWith: (options?: Partial<DelivererOptions>, overrides?: Overrides) => Deliverer;
  /** `sendMessages` of the rig's instance on the current store. */
  sent: (count: number, from?: number) => Promise<Sent[]>;
  /** `handTo` for the rig's instance. */
  handOut: (router: Router, commits: Commit[], answers: string[], arrived?: boolean[]) => void;
  /** `storedEvents` of the current store. */
  stored: (stream: string) => ReturnType<typeof storedEvents>;
}

interface WorkerRigOptions<S extends EventStore> extends AttemptPolicy {
  instanceId: string;
  /** A fresh store for each test (`keys` for a sealed one). */
  store: (keys: ContentKeys) => S;
  /** The delivery client's time-out (and so a router's attempt time-out); default 2 s. */
  timeoutMs?: number;
}

interface ClientLife<C extends DeliveryClient> {
  /** The client of each test. */
  client: () => C;
  /** Runs first after each test (say, to let attempts still waiting on the client end, so lanes go idle). */
  release?: (client: C) => Promise<void>;
}

/** Registers the hooks that make and stop the parts around each test of the describe block it is called in. */
const workerRig = <S extends EventStore, C extends DeliveryClient>(options: WorkerRigOptions<S>, life: ClientLife<C>): WorkerRig<S, C> => {
  const { instanceId, timeoutMs = 2_000 } = options;
  const deliverers: Deliverer[] = [];
  const wiring = (overrides: Overrides): Wiring => ({
    store: rig.store,
    endpoints: overrides.endpoints ?? rig.endpoints,
    deliveries: overrides.deliveries,
    ...(overrides.parts ?? rig.attemptParts()),
  });
  // The per-test fields are set by the beforeEach below, before any test (or its own beforeEach) can read them.
  const rig = {
    instanceId,
    append: (stream, ...events) => appendTo(rig.store, stream, ...events),
    erase: async () => {
      await rig.keys.destroy(instanceId);
      await rig.append(instanceStream(instanceId), instanceEvent('InstanceDataErased', new Date().toISOString(), {}));
      await rig.endpoints.reach(instanceId, 2_000);
    },
    attemptParts: (schedule = options.schedule) => attemptParts(rig.secrets, rig.client, { schedule, threshold: options.threshold }),
    routerWith: (routerOptions = {}, overrides = {}) => routerOn(wiring(overrides), { concurrency: 16, attemptTimeoutMs: timeoutMs, ...routerOptions }),
    delivererWith: (delivererOptions = {}, overrides = {}) => {
      const deliverer = delivererOn(wiring(overrides), delivererOptions);
      deliverers.push(deliverer);
      return deliverer;
    },
    sent: (count, from) => sendMessages(rig.store, instanceId, count, from),
    handOut: (router, commits, answers, arrived) => handTo(router, instanceId, commits, answers, arrived),
    stored: (stream) => storedEvents(rig.store, stream),
  } as WorkerRig<S, C>;
  beforeEach(() => {
    rig.keys = new ContentKeys(new InMemoryKeyBucket());
    rig.store = options.store(rig.keys);
    rig.endpoints = new EndpointDirectory(rig.store, testLogger());
    rig.endpoints.start();
    rig.secrets = new InMemoryWebhookSecretStore();
    rig.client = life.client();
  });
  afterEach(async () => {
    await life.release?.(rig.client);
    for (const deliverer of deliverers.splice(0)) await deliverer.stop();
    await rig.endpoints.stop();
  });
  return rig;
};

/** A worker rig delivering over real HTTP to a receiver on 127.0.0.1 that checks every signature. */
export interface ReceiverRig<S extends EventStore> extends WorkerRig<S, DeliveryClient> {
  /** Started before the describe block's tests, stopped after them (with the client). */
  readonly receiver: WebhookReceiver;
  /** The current test's path on the receiver: each test has its own, so replies and requests stay apart. */
  path: string;
  /** The instance with its webhook at `path` (`enabled` as given), its secret known to the receiver. */
  givenInstance: (at: string, enabled?: boolean) => Promise<void>;
}

/** One receiver and one delivery client for the describe block; store, directory and path fresh for each test. */
export const receiverRig = <S extends EventStore>(options: WorkerRigOptions<S> & { pathPrefix: string }): ReceiverRig<S> => {
  const receiver = new WebhookReceiver();
  const client = createDeliveryClient({ timeoutMs: options.timeoutMs ?? 2_000, allowPrivateNetworks: true });
  let n = 0;
  const rig = Object.assign(workerRig(options, { client: () => client }), {
    receiver,
    path: '',
    givenInstance: async (at: string, enabled = true) => {
      await configureWebhook(rig.store, rig.instanceId, receiver.url(rig.path), at, enabled);
      receiver.secret(rig.path, await rig.secrets.getOrCreate(rig.instanceId));
    },
  });
  beforeAll(() => receiver.start());
  afterAll(async () => {
    await client.close();
    await receiver.stop();
  });
  beforeEach(() => void (rig.path = `${options.pathPrefix}-${++n}`));
  return rig;
};

/**
 * A worker rig whose delivery client records what is POSTed and answers as the test says (`GatedClient`), with the
 * instance's webhook at `url` since `at`, the directory caught up, before each test.
 */
export const gatedRig = <S extends EventStore>(options: WorkerRigOptions<S> & { url: string; at: string }): WorkerRig<S, GatedClient> => {
  const rig = workerRig(options, { client: () => new GatedClient(), release: (client) => client.close() });
  beforeEach(async () => {
    await configureWebhook(rig.store, rig.instanceId, options.url, options.at);
    await rig.endpoints.reach(rig.instanceId, 2_000);
  });
  return rig;
};
