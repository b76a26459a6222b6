import type { InstanceLifecycle } from '../validation';

export interface WebhookSettings {
  url: string;
  enabled: boolean;
  /** The webhook event types delivered; empty = all. */
  events: string[];
}

/** A restriction WhatsApp put on the account's sends: since when, and until when if WhatsApp said. */
export interface Restriction {
  since: string;
  until: string | null;
}

export interface ExistingInstance {
  exists: true;
  instanceId: string;
  account: string;
  createdAt: string;
  lifecycle: InstanceLifecycle;
  /** When the instance entered its current lifecycle state. */
  since: string;
  webhook: WebhookSettings | null;
  linkedNumber: string | null;
  lastDisconnectReason: string | null;
  /**
   * How many times the instance was reset. A platform connection is tied to the count it started under, so what a
   * connection from before a reset reports late is recognised as stale (see `decideConnectionFact`).
   */
  resets: number;
  /**
   * The latest restriction of the linked account's sends, or null; one past its `until` is over (`activeRestriction`).
   * It ends with the link: a logout, a link to another number and a reset forget it.
   */
  restriction: Restriction | null;
  /** When the instance's message content was last erased (its data key destroyed), or null. */
  dataErasedAt: string | null;
}

export type InstanceState = { exists: false } | ExistingInstance;

export const initialInstanceState = (): InstanceState => ({ exists: false });

/** The lifecycle states in which sends must fail at once: the device is gone or the link is broken. */
export const isInstanceBlocked = (state: ExistingInstance): boolean => state.lifecycle === 'logged_out' || state.lifecycle === 'failed';

/** The instance's restriction if it still holds at `now`: lifted ones are null, and so are those past their `until`. */
export const activeRestriction = (state: ExistingInstance, now: number): Restriction | null => {
  const { restriction } = state;
  if (!restriction) return null;
  return restriction.until === null || Date.parse(restriction.until) > now ? restriction : null;
};
