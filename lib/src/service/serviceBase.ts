import { openContentKeys, type ContentKeys } from '../contentKeys';
import { JetStreamEventStore, SealedEventStore } from '../eventStore';
import type { Logger } from '../log';
import { connectNats, type NatsHandle } from '../nats';
import { enableDefaultMetrics } from '../ops/metrics';
import type { OpsServer } from '../ops/opsServer';
import { startBehindOps, type StartupReadiness } from '../ops/startup';

/** A started service, as its callers (main, the launcher, test stacks) hold it. */
export interface RunningService {
  grpcPort: number;
  opsPort: number;
  close(): Promise<void>;
}

/** The settings every service's base needs. */
export interface ServiceBaseConfig {
  opsHost: string;
  opsPort: number;
  natsUrl: string;
  natsReplicas?: number;
}

/** What every service stands on: NATS, the instances' data keys, and the event log sealed with them. */
export interface ServiceBase {
  startup: StartupReadiness;
  nats: NatsHandle;
  keys: ContentKeys;
  events: SealedEventStore;
}

/**
 * The start every service shares: its default metrics, the ops server first (so `/readyz` says what start-up waits
 * for), NATS, the content keys and the sealed event store; then `build` makes the service's own parts on them. A
 * failed start closes the ops server again. `closeBase` ends what the base opened (the keys' watch, NATS): the last
 * step of the service's own close.
 */
export const startServiceBase = async <S>(
  name: string,
  config: ServiceBaseConfig,
  logger: Logger,
  waitingFor: string,
  build: (base: ServiceBase) => Promise<S>,
): Promise<{ ops: OpsServer; service: S; closeBase: () => Promise<void> }> => {
  enableDefaultMetrics(name);
  let base: ServiceBase | undefined;
  const started = await startBehindOps({ host: config.opsHost, port: config.opsPort }, async (startup) => {
    const nats = await connectNats({ url: config.natsUrl, name, logger, replicas: config.natsReplicas });
    startup.waitingFor(waitingFor);
    const keys = await openContentKeys(nats);
    base = { startup, nats, keys, events: new SealedEventStore(await JetStreamEventStore.open(nats, { logger }), keys) };
    return build(base);
  });
  const { nats, keys } = base!;
  return {
    ...started,
    closeBase: async () => {
      keys.stop();
      await nats.close();
    },
  };
};
