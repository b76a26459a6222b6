import { credentials } from '@grpc/grpc-js';
import {
  balancedChannelOptions,
  CallStreamClient,
  healthProbe,
  loadSessionsProto,
  callServerStream,
  type CheckNumbersRequest,
  type GetPairingCodeRequest,
  type GetQrRequest,
  type InstanceRequest,
  type MediaChunkMessage,
  type MessageRequest,
  type SandboxInboundRequest,
  type SandboxRestrictRequest,
  type SandboxScanRequest,
  type SendRequest,
} from '@wagw/lib';

/**
 * Deadlines of the calls that wait on WhatsApp: the sessions replica gives a call it routes to the instance's owner 30
 * s (ownerRouter), plus a margin; a QR code or pairing code waits up to 60 s (QR_WAIT_MAX_MS), and a received file is
 * fetched from WhatsApp's media host before its head comes, plus a margin.
 */
const PLATFORM_CALL_MS = 35_000;
const LONG_CALL_MS = 65_000;

/**
 * The gateway's typed view of the Sessions gRPC service. Unary methods (sends too) go over its Call stream; received
 * files come on a stream of their own. `timeoutMs` (tests) replaces the platform calls' deadlines.
 */
export const createSessionsClient = (address: string, timeoutMs?: number) => {
  const longMs = timeoutMs ?? LONG_CALL_MS;
  const platformMs = timeoutMs ?? PLATFORM_CALL_MS;
  const proto = loadSessionsProto();
  // Any replica accepts any call and routes it to the replica that holds the instance.
  const client = new proto.Sessions(address, credentials.createInsecure(), balancedChannelOptions);
  const calls = new CallStreamClient(proto.Sessions.service, () => client.Call(), { service: 'sessions' });
  return {
    getQr: (request: GetQrRequest) => calls.call('GetQr', request, longMs),
    getPairingCode: (request: GetPairingCodeRequest) => calls.call('GetPairingCode', request, longMs),
    checkNumbers: (request: CheckNumbersRequest) => calls.call('CheckNumbers', request, platformMs),
    listGroups: (request: InstanceRequest) => calls.call('ListGroups', request, platformMs),
    reconnect: (request: InstanceRequest) => calls.call('Reconnect', request, platformMs),
    send: (request: SendRequest) => calls.call('Send', request, 10_000),
    sandboxScan: (request: SandboxScanRequest) => calls.call('SandboxScan', request, 10_000),
    sandboxInbound: (request: SandboxInboundRequest) => calls.call('SandboxInbound', request, 10_000),
    sandboxRestrict: (request: SandboxRestrictRequest) => calls.call('SandboxRestrict', request, 10_000),
    markRead: (request: MessageRequest) => calls.call('MarkRead', request, platformMs),
    /**
     * A received file: its head (type, name, size), then its bytes in chunks; a failure before the head is the call's
     * error. Each part has the calls' deadline while it is waited for (the file is fetched before the head comes);
     * `signal` cancels the call when the HTTP client goes away.
     */
    streamMedia: (request: MessageRequest, signal?: AbortSignal) =>
      callServerStream<MessageRequest, MediaChunkMessage>(client.StreamMedia.bind(client), request, { itemWithinMs: longMs, signal }),
    sendUsage: (request: InstanceRequest) => calls.call('SendUsage', request, 5_000),
    ready: healthProbe(client),
    close: () => {
      calls.close();
      client.close();
    },
  };
};

export type SessionsClientApi = ReturnType<typeof createSessionsClient>;
