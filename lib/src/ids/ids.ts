import { createHash, randomUUID } from 'node:crypto';

/** Instance ids: 20 upper-case hex characters (also a valid NATS subject token). */
export const INSTANCE_ID_PATTERN = '^[0-9A-F]{20}$';

/**
 * The id of the instance a create command makes. Derived from the account and the command id, so a retried
 * create (same command id) names the same instance and appends nothing twice.
 */
export const instanceIdFor = (account: string, commandId: string): string =>
  createHash('sha256').update(`${account}\u0000${commandId}`).digest('hex').slice(0, 20).toUpperCase();

export const newCommandId = (): string => randomUUID();
