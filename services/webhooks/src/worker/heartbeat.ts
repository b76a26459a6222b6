/** How often work in hand is kept in progress: every 10 s, and at least three times per ack wait (`WEBHOOK_ACK_WAIT_MS` may be as low as 7 s). */
export const heartbeatMs = (ackWaitMs: number): number => Math.min(10_000, Math.floor(ackWaitMs / 3));
