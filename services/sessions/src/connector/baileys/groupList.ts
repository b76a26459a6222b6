import type { GroupMetadata } from '@whiskeysockets/baileys';
import type { GroupInfo } from '../port';

/**
 * The groups of one connection's account, fetched at most once per `ttlMs` (calls meanwhile share the fetch): each
 * fetch is a `w:g2` query WhatsApp counts against the account, and a client polling list_groups must not turn into
 * a stream of queries that gets the number flagged. A failed fetch is not kept.
 */
export class GroupList {
  private last: { at: number; list: Promise<GroupInfo[]> } | null = null;

  constructor(private readonly ttlMs: number) {}

  get(fetch: () => Promise<Record<string, GroupMetadata>>): Promise<GroupInfo[]> {
    const now = Date.now();
    if (this.last && now - this.last.at <= this.ttlMs) return this.last.list;
    const list = fetch().then((groups) =>
      Object.values(groups).map((group) => ({ id: group.id, subject: group.subject, participants: group.size ?? group.participants.length })),
    );
    const entry = { at: now, list };
    this.last = entry;
    list.catch(() => {
      if (this.last === entry) this.last = null;
    });
    return list;
  }
}
