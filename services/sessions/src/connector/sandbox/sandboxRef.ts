import type { SandboxMediaRef } from './sandboxMedia';

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
