import { credentials } from '@grpc/grpc-js';
import {
  balancedChannelOptions,
  callServerStream,
  callUnary,
  loadInstancesProto,
  type HistoryChunkMessage,
  type HistoryMessage,
  type InstanceListMessage,
  type InstanceMessage,
  type SetWebhookMessage,
  type CreateInstanceRequest,
  type InstanceRef,
  type ListInstancesRequest,
  type SetWebhookRequest,
  type ResetInstanceRequest,
  type EraseDataRequest,
  type HistoryRequest,
} from '@wagw/lib';

/** The gateway's typed view of the Instances gRPC service; every call has a deadline. */
export const createInstancesClient = (address: string, timeoutMs = 5_000) => {
  const proto = loadInstancesProto();
  const client = new proto.Instances(address, credentials.createInsecure(), balancedChannelOptions);
  return {
    create: (account: string, commandId: string) =>
      callUnary<CreateInstanceRequest, InstanceMessage>(client.Create.bind(client), { account, commandId }, timeoutMs),
    get: (account: string, instanceId: string, at = '') =>
      callUnary<InstanceRef, InstanceMessage>(client.Get.bind(client), { account, instanceId, at }, timeoutMs),
    list: (account: string, cursor: string, limit: number) =>
      callUnary<ListInstancesRequest, InstanceListMessage>(client.List.bind(client), { account, cursor, limit }, timeoutMs),
    setWebhook: (request: SetWebhookRequest) => callUnary<SetWebhookRequest, SetWebhookMessage>(client.SetWebhook.bind(client), request, timeoutMs),
    reset: (account: string, instanceId: string, commandId: string) =>
      callUnary<ResetInstanceRequest, InstanceMessage>(client.Reset.bind(client), { account, instanceId, commandId }, timeoutMs),
    eraseData: (account: string, instanceId: string, commandId: string) =>
      callUnary<EraseDataRequest, InstanceMessage>(client.EraseData.bind(client), { account, instanceId, commandId }, timeoutMs),
    history: (request: HistoryRequest) => callUnary<HistoryRequest, HistoryMessage>(client.History.bind(client), request, timeoutMs),
    /** No deadline: an export lasts as long as the history is long; the service's read fails when the store stops answering. */
    exportHistory: (request: HistoryRequest) => callServerStream<HistoryRequest, HistoryChunkMessage>(client.ExportHistory.bind(client), request),
    /** Resolves true when a connection to the service can be made within `ms`. */
    ready: (ms: number) => new Promise<boolean>((resolve) => client.waitForReady(Date.now() + ms, (error) => resolve(!error))),
    close: () => client.close(),
  };
};

export type InstancesClientApi = ReturnType<typeof createInstancesClient>;
