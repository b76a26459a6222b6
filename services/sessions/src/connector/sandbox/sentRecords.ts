import type { MessageRef, OutboundMessage } from '../port';

/** What the platform accepted from an instance (inspectable by tests and demos). */
export interface SandboxSent {
  instanceId: string;
  messageId: string;
  to: string;
  text: string | null;
  media: { mimetype: string; filename: string | null; size: number; caption: string | null; voiceNote: boolean } | null;
  /** Only on sends that carry them. */
  location?: OutboundMessage['location'];
  contact?: OutboundMessage['contact'];
  reaction?: { target: MessageRef; emoji: string };
  quoted?: MessageRef;
  acceptedAt: string;
}

/** Records of sends kept per instance (the oldest are dropped beyond it, and so is their deduplication). */
const RECORDS_PER_INSTANCE = 10_000;

/** The sends the sandbox took, per instance, newest last (the latest 10,000 each). */
export class SentRecords {
  private readonly records = new Map<string, SandboxSent[]>();

  add(instanceId: string, message: OutboundMessage, acceptedAt: string): void {
    const records = this.records.get(instanceId) ?? [];
    this.records.set(instanceId, records);
    const { media } = message;
    records.push({
      instanceId,
      messageId: message.messageId,
      to: message.to,
      text: message.text ?? null,
      media: media
        ? {
            mimetype: media.mimetype,
            filename: media.filename ?? null,
            size: media.data.length,
            caption: media.caption ?? null,
            voiceNote: media.voiceNote === true,
          }
        : null,
      ...(message.location ? { location: message.location } : {}),
      ...(message.contact ? { contact: message.contact } : {}),
      ...(message.reaction ? { reaction: message.reaction } : {}),
      ...(message.quoted ? { quoted: message.quoted } : {}),
      acceptedAt,
    });
    records.splice(0, Math.max(0, records.length - RECORDS_PER_INSTANCE));
  }

  has(instanceId: string, messageId: string): boolean {
    return this.records.get(instanceId)?.some((r) => r.messageId === messageId) ?? false;
  }

  of(instanceId: string): SandboxSent[] {
    return [...(this.records.get(instanceId) ?? [])];
  }
}
