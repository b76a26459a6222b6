import { credentials } from '@grpc/grpc-js';
import {
  balancedChannelOptions,
  CallStreamClient,
  healthProbe,
  loadWebhooksProto,
  type ListDeliveriesRequest,
  type RedeliverRequest,
  type ReplayRequest,
  type StreamEventsRequest,
} from '@wagw/lib';

/** The gateway's typed view of the Webhooks gRPC service. Unary methods go over its Call stream. */
export const createWebhooksClient = (address: string, timeoutMs = 10_000) => {
  const proto = loadWebhooksProto();
  const client = new proto.Webhooks(address, credentials.createInsecure(), balancedChannelOptions);
  const calls = new CallStreamClient(proto.Webhooks.service, () => client.Call(), { service: 'webhooks' });
  return {
    list: (request: ListDeliveriesRequest) => calls.call('ListDeliveries', request, timeoutMs),
    redeliver: (request: RedeliverRequest) => calls.call('Redeliver', request, timeoutMs),
    replay: (request: ReplayRequest) => calls.call('Replay', request, timeoutMs),
    /** A live events stream (no deadline: it lasts as long as its reader); cancel it to end it. */
    streamEvents: (request: StreamEventsRequest) => client.StreamEvents(request),
    ready: healthProbe(client),
    close: () => {
      calls.close();
      client.close();
    },
  };
};

export type WebhooksClientApi = ReturnType<typeof createWebhooksClient>;
