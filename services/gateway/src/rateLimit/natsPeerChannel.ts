import { SUBJECTS, type Logger, type NatsHandle } from '@wagw/lib';
import type { PeerChannel, PeerCounts } from './windowCounter';

const isPeerCounts = (value: unknown): value is PeerCounts =>
  typeof value === 'object' && value !== null && typeof (value as PeerCounts).replica === 'string' && Array.isArray((value as PeerCounts).counts);

/** Rate-limit counts between gateway replicas over core NATS (nothing stored: a lost message costs precision only). */
export const natsPeerChannel = ({ nc }: NatsHandle, logger: Logger): PeerChannel => ({
  publish: (message) => nc.publish(SUBJECTS.gatewayRateCounts, JSON.stringify(message)),
  subscribe: (handler) => {
    const subscription = nc.subscribe(SUBJECTS.gatewayRateCounts, {
      callback: (error, msg) => {
        if (error) return logger.warn({ err: error }, 'rate-limit counts subscription failed');
        try {
          const message: unknown = msg.json();
          if (isPeerCounts(message)) handler(message);
        } catch (cause) {
          logger.warn({ err: cause }, 'unreadable rate-limit counts ignored');
        }
      },
    });
    return () => subscription.unsubscribe();
  },
});
