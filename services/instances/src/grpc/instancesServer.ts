import { unaryHandler, type HistoryEventInput, type InstanceInput, type InstancesHandlers, type Logger } from '@wagw/lib';
import type { ExistingInstance } from '@wagw/lib';
import type { InstancesService } from '../application';

export const toInstanceMessage = (instance: ExistingInstance, version: number): InstanceInput => ({
  instanceId: instance.instanceId,
  account: instance.account,
  state: instance.lifecycle,
  createdAt: instance.createdAt,
  stateSince: instance.since,
  webhook: instance.webhook,
  linkedNumber: instance.linkedNumber ?? '',
  lastDisconnectReason: instance.lastDisconnectReason ?? '',
  version,
});

/** Maps the gRPC contract onto the use cases; no rule lives here. */
export const instancesHandlers = (service: InstancesService, logger: Logger): InstancesHandlers => ({
  Create: unaryHandler(logger, 'Create', async (r) => {
    const view = await service.create(r.account, r.commandId);
    return toInstanceMessage(view.instance, view.version);
  }),
  Get: unaryHandler(logger, 'Get', async (r) => {
    const view = await service.get(r.account, r.instanceId, r.at);
    return toInstanceMessage(view.instance, view.version);
  }),
  List: unaryHandler(logger, 'List', async (r) => ({
    instances: (await service.list(r.account)).map((i) => toInstanceMessage(i, 0)),
  })),
  SetWebhook: unaryHandler(logger, 'SetWebhook', async (r) => {
    const view = await service.setWebhook(r.account, r.instanceId, r.url, r.enabled, r.commandId);
    return { instance: toInstanceMessage(view.instance, view.version), signingSecret: view.signingSecret };
  }),
  Reset: unaryHandler(logger, 'Reset', async (r) => {
    const view = await service.reset(r.account, r.instanceId, r.commandId);
    return toInstanceMessage(view.instance, view.version);
  }),
  History: unaryHandler(logger, 'History', async (r) => {
    const page = await service.history(r.account, r.instanceId, Number(r.fromSequence), r.limit, {
      types: r.types,
      since: r.since,
      until: r.until,
      messageId: r.messageId,
    });
    return {
      events: page.events.map((e): HistoryEventInput => ({
        sequence: e.sequence,
        subject: e.stream,
        type: e.type,
        schemaVersion: e.schemaVersion,
        occurredAt: e.occurredAt,
        dataJson: JSON.stringify(e.data),
      })),
      nextSequence: page.nextSequence ?? 0,
    };
  }),
});
