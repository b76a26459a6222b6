import type { ChannelOptions } from '@grpc/grpc-js';
import { messageSizeOptions } from './messageSize';

/**
 * Channel options for the gateway's clients: round robin over every address the target resolves to (a
 * `dns:///service:port` name with one record per replica, or `ipv4:10.0.0.1:50051,10.0.0.2:50051`), keep-alive
 * pings, a short reconnect backoff so a restarted replica is used again quickly, and the message size limit
 * (messageSize.ts).
 */
export const balancedChannelOptions: ChannelOptions = {
  ...messageSizeOptions,
  'grpc.keepalive_time_ms': 30_000,
  'grpc.max_reconnect_backoff_ms': 2_000,
  'grpc.service_config': JSON.stringify({ loadBalancingConfig: [{ round_robin: {} }] }),
};
