import { credentials } from '@grpc/grpc-js';
import {
  balancedChannelOptions,
  callUnary,
  loadWebhooksProto,
  type DeliveryListMessage,
  type ListDeliveriesRequest,
  type RedeliverMessage,
  type RedeliverRequest,
  type ReplayMessage,
  type ReplayRequest,
  type StreamEventsRequest,
} from '@wagw/lib';

/** The gateway's typed view of the Webhooks gRPC service. */
export const createWebhooksClient = (address: string, timeoutMs = 10_000) => {
  const proto = loadWebhooksProto();
  const client = new proto.Webhooks(address, credentials.createInsecure(), balancedChannelOptions);
  return {
    list: (request: ListDeliveriesRequest) => callUnary<ListDeliveriesRequest, DeliveryListMessage>(client.ListDeliveries.bind(client), request, timeoutMs),
    redeliver: (request: RedeliverRequest) => callUnary<RedeliverRequest, RedeliverMessage>(client.Redeliver.bind(client), request, timeoutMs),
    replay: (request: ReplayRequest) => callUnary<ReplayRequest, ReplayMessage>(client.Replay.bind(client), request, timeoutMs),
    /** A live events stream (no deadline: it lasts as long as its reader); cancel it to end it. */
    streamEvents: (request: StreamEventsRequest) => client.StreamEvents(request),
    ready: (ms: number) => new Promise<boolean>((resolve) => client.waitForReady(Date.now() + ms, (error) => resolve(!error))),
    close: () => client.close(),
  };
};

export type WebhooksClientApi = ReturnType<typeof createWebhooksClient>;
