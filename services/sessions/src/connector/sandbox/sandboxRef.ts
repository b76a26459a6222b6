import type { InboundMessage } from '../port';
import { sandboxMediaInfo, type SandboxMediaRef } from './sandboxMedia';

/** An inbound message to inject; the platform fills in its id and timestamp unless given, and makes its media file. */
export type SandboxInbound = Pick<InboundMessage, 'from' | 'pushName' | 'text'> &
  Partial<Pick<InboundMessage, 'platformMessageId' | 'timestamp' | 'groupId'>> & { media: Omit<SandboxMediaRef, 'seed'> | null };

/** What the sandbox keeps of an inbound message (its `ref`): who sent it, and its media. */
export interface SandboxRef {
  sandbox: true;
  platformMessageId: string;
  from: string;
  media: SandboxMediaRef | null;
}

/** A read receipt an instance sent for a message a simulated contact wrote. */
export interface SandboxReadMark {
  platformMessageId: string;
  from: string;
  at: string;
}

const READ_MARKS_KEPT = 1_000;

/** The read receipts instances sent, per instance, the latest 1,000 each. */
export class ReadMarks {
  private readonly byInstance = new Map<string, SandboxReadMark[]>();

  add(instanceId: string, mark: SandboxReadMark): void {
    const marks = this.byInstance.get(instanceId) ?? [];
    this.byInstance.set(instanceId, marks);
    marks.push(mark);
    if (marks.length > READ_MARKS_KEPT) marks.shift();
  }

  of(instanceId: string): SandboxReadMark[] {
    return [...(this.byInstance.get(instanceId) ?? [])];
  }
}

export const parseRef = (raw: string): SandboxRef => {
  const ref = JSON.parse(raw) as Partial<SandboxRef>;
  if (ref.sandbox !== true || typeof ref.platformMessageId !== 'string' || typeof ref.from !== 'string') throw new Error('not a sandbox message reference');
  return { sandbox: true, platformMessageId: ref.platformMessageId, from: ref.from, media: ref.media ?? null };
};

/** The message a simulated contact's inbound is, with the ref that names its sender and makes its file. */
export const sandboxInboundMessage = (inbound: SandboxInbound, platformMessageId: string, now: Date): InboundMessage => {
  const media = inbound.media ? { ...inbound.media, seed: platformMessageId } : null;
  const ref: SandboxRef = { sandbox: true, platformMessageId, from: inbound.from, media };
  return {
    platformMessageId,
    from: inbound.from,
    ...(inbound.groupId ? { groupId: inbound.groupId } : {}),
    pushName: inbound.pushName,
    text: inbound.text,
    media: media ? sandboxMediaInfo(media) : null,
    timestamp: inbound.timestamp ?? now.toISOString(),
    ref: JSON.stringify(ref),
  };
};
