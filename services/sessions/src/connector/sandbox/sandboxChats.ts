import { createHash } from 'node:crypto';
import type { GroupInfo } from '../port';

/**
 * The sandbox's groups: every linked number takes part in the same two groups, their ids derived from the number
 * (one of each id form WhatsApp uses), so a demo can list them and send to them without setting anything up.
 */
export const sandboxGroupsOf = (number: string): GroupInfo[] => {
  const digits = BigInt(`0x${createHash('sha256').update(number).digest('hex').slice(0, 12)}`)
    .toString()
    .padStart(12, '0')
    .slice(0, 12);
  return [
    { id: `120363${digits}@g.us`, subject: 'Sandbox team', participants: 3 },
    { id: `${number}-1700000000@g.us`, subject: 'Sandbox family', participants: 5 },
  ];
};

export const isSandboxGroupOf = (number: string, chat: string): boolean => sandboxGroupsOf(number).some((group) => group.id === chat);

/** A simulated message in a group the instance is not in: a fault of the request, unlike a connection that is down. */
export class SandboxNotInGroup extends Error {}

/** A typing presence an instance showed (inspectable by tests and demos). */
export interface SandboxPresence {
  to: string;
  typing: boolean;
  at: number;
}

const PRESENCES_PER_INSTANCE = 1_000;

/** The presences each instance showed, newest last (the latest 1,000 each). */
export class PresenceLog {
  private readonly log = new Map<string, SandboxPresence[]>();

  add(instanceId: string, to: string, typing: boolean): void {
    const entries = this.log.get(instanceId) ?? [];
    this.log.set(instanceId, entries);
    entries.push({ to, typing, at: Date.now() });
    entries.splice(0, Math.max(0, entries.length - PRESENCES_PER_INSTANCE));
  }

  of(instanceId: string): SandboxPresence[] {
    return [...(this.log.get(instanceId) ?? [])];
  }
}
