import {
  serverStreamHandler,
  unaryHandler,
  type HistoryChunkInput,
  type HistoryRequest,
  type InstanceInput,
  type HandlersWithoutCall,
  type InstancesHandlers,
  type Logger,
} from '@wagw/lib';
import { activeRestriction, type ExistingInstance } from '@wagw/lib';
import type { HistoryFilters, InstancesService } from '../application';
import { eventsJson, eventsNdjson } from './historyJson';

/** An export's pages leave one at a time (ServerStreamPacing): what is read is never more than a page ahead of the caller. */
const EXPORT_PACING = { frameAtATime: true };

/** `now`: the moment the view is of (a status `at=` query's time), for whether a restriction still held then. */
export const toInstanceMessage = (instance: ExistingInstance, version: number, now = Date.now()): InstanceInput => ({
  instanceId: instance.instanceId,
  account: instance.account,
  state: instance.lifecycle,
  createdAt: instance.createdAt,
  stateSince: instance.since,
  webhook: instance.webhook,
  linkedNumber: instance.linkedNumber ?? '',
  lastDisconnectReason: instance.lastDisconnectReason ?? '',
  dataErasedAt: instance.dataErasedAt ?? '',
  version,
  restriction: restrictionMessage(instance, now),
});

/** The restriction while it holds (status shows none once its end passed or it was lifted). */
const restrictionMessage = (instance: ExistingInstance, now: number): { since: string; until: string } | null => {
  const restriction = activeRestriction(instance, now);
  return restriction ? { since: restriction.since, until: restriction.until ?? '' } : null;
};

/** Maps the gRPC contract onto the use cases; no rule lives here. `Call` is served from these by startGrpcServer. */
export const instancesHandlers = (service: InstancesService, logger: Logger): HandlersWithoutCall<InstancesHandlers> => ({
  Create: unaryHandler(logger, 'Create', async (r) => {
    const view = await service.create(r.account, r.commandId);
    return toInstanceMessage(view.instance, view.version);
  }),
  Get: unaryHandler(logger, 'Get', async (r) => {
    const view = await service.get(r.account, r.instanceId, r.at);
    const { used, max } = service.instanceUsage(r.account);
    return { ...toInstanceMessage(view.instance, view.version, r.at ? Date.parse(r.at) : Date.now()), accountInstances: used, instanceQuota: max };
  }),
  List: unaryHandler(logger, 'List', async (r) => {
    const page = await service.list(r.account, r.cursor, r.limit);
    return { instances: page.items.map((i) => toInstanceMessage(i, 0)), nextCursor: page.nextCursor ?? '' };
  }),
  SetWebhook: unaryHandler(logger, 'SetWebhook', async (r) => {
    const view = await service.setWebhook(r.account, r.instanceId, r.url, r.enabled, r.commandId, r.events);
    return { instance: toInstanceMessage(view.instance, view.version), signingSecret: view.signingSecret };
  }),
  Reset: unaryHandler(logger, 'Reset', async (r) => {
    const view = await service.reset(r.account, r.instanceId, r.commandId);
    return toInstanceMessage(view.instance, view.version);
  }),
  EraseData: unaryHandler(logger, 'EraseData', async (r) => {
    const view = await service.eraseData(r.account, r.instanceId, r.commandId);
    return toInstanceMessage(view.instance, view.version);
  }),
  History: unaryHandler(logger, 'History', async (r) => {
    const page = await service.history(r.account, r.instanceId, Number(r.fromSequence), r.limit, filtersOf(r));
    return { eventsJson: eventsJson(page.json), count: page.events.length, nextSequence: page.nextSequence ?? 0 };
  }),
  // A page at a time: an erasure while the caller reads shows the rest erased, not read ahead in clear.
  ExportHistory: serverStreamHandler(
    logger,
    'ExportHistory',
    async (r) => {
      const pages = service.exportHistory(r.account, r.instanceId, Number(r.fromSequence), filtersOf(r));
      const frames = async function* (): AsyncGenerator<HistoryChunkInput> {
        for await (const page of pages) yield { ndjson: eventsNdjson(page.json), nextSequence: page.nextSequence ?? 0 };
      };
      // A caller that goes away ends the export: its scan is closed.
      return { frames: frames(), close: async () => void (await pages.return(undefined)) };
    },
    EXPORT_PACING,
  ),
});

const filtersOf = (r: HistoryRequest): HistoryFilters => ({ types: r.types, since: r.since, until: r.until, messageId: r.messageId });
