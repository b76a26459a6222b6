import { activeRestriction, type ExistingInstance } from '@wagw/lib';

/** A restriction of an account's sends as the sessions service knows it: since when, and until when if WhatsApp said. */
export interface KnownRestriction {
  since: number;
  until: number | null;
}

/**
 * Whether the instance's sends wait now: while its restriction holds, until its end when WhatsApp named one, else for
 * `unknownEndPauseMs` from its start. After that one send goes out as a probe: refused again (463) it starts a new
 * pause; taken, it lifts the restriction. Sending on into a restriction would count as more "reach outs" and
 * lengthen it, so queued sends wait rather than fail.
 */
export const isSendPaused = (restriction: KnownRestriction | null, now: number, unknownEndPauseMs: number): boolean => {
  if (!restriction) return false;
  return now < (restriction.until ?? restriction.since + unknownEndPauseMs);
};

/** The instance state's restriction, if it holds at `now`, in the form above. */
export const restrictionOf = (state: ExistingInstance | undefined, now: number): KnownRestriction | null => {
  const restriction = state && activeRestriction(state, now);
  if (!restriction) return null;
  return { since: Date.parse(restriction.since), until: restriction.until === null ? null : Date.parse(restriction.until) };
};
