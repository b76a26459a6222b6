import { credentials } from '@grpc/grpc-js';
import {
  balancedChannelOptions,
  callUnary,
  loadSessionsProto,
  MEDIA_RESPONSE_MAX_BYTES,
  type CheckNumbersRequest,
  type GetPairingCodeRequest,
  type NumberChecksMessage,
  type GetQrRequest,
  type PairingCodeMessage,
  type InstanceRequest,
  type MarkReadMessage,
  type MediaMessage,
  type MessageRequest,
  type QrMessage,
  type ReconnectMessage,
  type SandboxInboundRequest,
  type SandboxMessage,
  type SandboxRestrictRequest,
  type SandboxScanRequest,
  type SendRequest,
  type SendUsageMessage,
} from '@wagw/lib';
import { SendStreamClient } from './sendStream';

/** The gateway's typed view of the Sessions gRPC service. */
export const createSessionsClient = (address: string, timeoutMs = 65_000) => {
  const proto = loadSessionsProto();
  // Any replica accepts any call and routes it to the replica that holds the instance.
  // Received media comes back in one message (GetMedia), up to WhatsApp's largest file plus room for the envelope.
  const client = new proto.Sessions(address, credentials.createInsecure(), {
    ...balancedChannelOptions,
    'grpc.max_receive_message_length': MEDIA_RESPONSE_MAX_BYTES + 64 * 1024,
  });
  const sends = new SendStreamClient(() => client.SendStream(), 10_000);
  return {
    getQr: (request: GetQrRequest) => callUnary<GetQrRequest, QrMessage>(client.GetQr.bind(client), request, timeoutMs),
    getPairingCode: (request: GetPairingCodeRequest) =>
      callUnary<GetPairingCodeRequest, PairingCodeMessage>(client.GetPairingCode.bind(client), request, timeoutMs),
    checkNumbers: (request: CheckNumbersRequest) => callUnary<CheckNumbersRequest, NumberChecksMessage>(client.CheckNumbers.bind(client), request, timeoutMs),
    reconnect: (request: InstanceRequest) => callUnary<InstanceRequest, ReconnectMessage>(client.Reconnect.bind(client), request, timeoutMs),
    send: async (request: SendRequest) => ({ messageId: await sends.send(request) }),
    sandboxScan: (request: SandboxScanRequest) => callUnary<SandboxScanRequest, SandboxMessage>(client.SandboxScan.bind(client), request, 10_000),
    sandboxInbound: (request: SandboxInboundRequest) => callUnary<SandboxInboundRequest, SandboxMessage>(client.SandboxInbound.bind(client), request, 10_000),
    sandboxRestrict: (request: SandboxRestrictRequest) =>
      callUnary<SandboxRestrictRequest, SandboxMessage>(client.SandboxRestrict.bind(client), request, 10_000),
    markRead: (request: MessageRequest) => callUnary<MessageRequest, MarkReadMessage>(client.MarkRead.bind(client), request, timeoutMs),
    getMedia: (request: MessageRequest) => callUnary<MessageRequest, MediaMessage>(client.GetMedia.bind(client), request, timeoutMs),
    sendUsage: (request: InstanceRequest) => callUnary<InstanceRequest, SendUsageMessage>(client.SendUsage.bind(client), request, 5_000),
    ready: (ms: number) => new Promise<boolean>((resolve) => client.waitForReady(Date.now() + ms, (error) => resolve(!error))),
    close: () => {
      sends.close();
      client.close();
    },
  };
};

export type SessionsClientApi = ReturnType<typeof createSessionsClient>;
