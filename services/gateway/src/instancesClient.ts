import { credentials } from '@grpc/grpc-js';
import {
  balancedChannelOptions,
  callServerStream,
  CallStreamClient,
  healthProbe,
  loadInstancesProto,
  type HistoryChunkMessage,
  type SetWebhookRequest,
  type HistoryRequest,
} from '@wagw/lib';

/** The gateway's typed view of the Instances gRPC service; every call has a deadline. Unary methods go over its Call stream. */
export const createInstancesClient = (address: string, timeoutMs = 5_000) => {
  const proto = loadInstancesProto();
  const client = new proto.Instances(address, credentials.createInsecure(), balancedChannelOptions);
  const calls = new CallStreamClient(proto.Instances.service, () => client.Call(), { service: 'instances' });
  return {
    create: (account: string, commandId: string) => calls.call('Create', { account, commandId }, timeoutMs),
    get: (account: string, instanceId: string, at = '') => calls.call('Get', { account, instanceId, at }, timeoutMs),
    list: (account: string, cursor: string, limit: number) => calls.call('List', { account, cursor, limit }, timeoutMs),
    setWebhook: (request: SetWebhookRequest) => calls.call('SetWebhook', request, timeoutMs),
    reset: (account: string, instanceId: string, commandId: string) => calls.call('Reset', { account, instanceId, commandId }, timeoutMs),
    eraseData: (account: string, instanceId: string, commandId: string) => calls.call('EraseData', { account, instanceId, commandId }, timeoutMs),
    history: (request: HistoryRequest) => calls.call('History', request, timeoutMs),
    /**
     * Each chunk has the calls' deadline while it is waited for; the export lasts as long as the history is long (and
     * its reader reads). No chunk is received ahead of the reader: a page the service reads ahead is content in clear
     * that an erasure meanwhile would no longer hide (the service reads the rest anew once it has seen the erasure).
     */
    exportHistory: (request: HistoryRequest, signal?: AbortSignal) =>
      callServerStream<HistoryRequest, HistoryChunkMessage>(client.ExportHistory.bind(client), request, { itemWithinMs: timeoutMs, signal, readAhead: 0 }),
    /** Resolves true when the service answers its health check (SERVING) within `ms`. */
    ready: healthProbe(client),
    close: () => {
      calls.close();
      client.close();
    },
  };
};

export type InstancesClientApi = ReturnType<typeof createInstancesClient>;
