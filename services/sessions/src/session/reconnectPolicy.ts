/** Delay before reconnect attempt `attempt` (1-based): 1 s doubling to a 60 s cap, with ±30 % jitter. */
export const reconnectDelayMs = (attempt: number, random: () => number, baseMs = 1_000, capMs = 60_000): number => {
  const raw = Math.min(capMs, baseMs * 2 ** Math.max(0, attempt - 1));
  return Math.round(raw * (0.7 + 0.6 * random()));
};
