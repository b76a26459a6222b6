import { getBinaryNodeChild, type BinaryNode } from '@whiskeysockets/baileys';

/** WhatsApp's error code for a send from a restricted account (an `<ack class="message" error="463">`). */
export const RESTRICTED_ERROR = '463';

/** Baileys' query id of the reach-out timelock (`fetchAccountReachoutTimelock`, a `w:mex` iq). */
export const REACHOUT_TIMELOCK_QUERY = '23983697327930364';

/** A restriction of a number's sends: until when (ms since the epoch), or null when WhatsApp does not say. */
export interface Restriction {
  until: number | null;
}

/** The numbers whose sends are refused; one past its `until` is over. */
export class Restrictions {
  private readonly byNumber = new Map<string, Restriction>();

  /** WhatsApp keeps (and names) the end in whole seconds: the end that holds is the one it announces. */
  set(number: string, until: number | null): void {
    this.byNumber.set(number, { until: until === null ? null : Math.floor(until / 1000) * 1000 });
  }

  lift(number: string): void {
    this.byNumber.delete(number);
  }

  /** The restriction of `number` that holds now, or undefined. */
  of(number: string, now = Date.now()): Restriction | undefined {
    const restriction = this.byNumber.get(number);
    if (restriction?.until != null && restriction.until <= now) {
      this.byNumber.delete(number);
      return undefined;
    }
    return restriction;
  }
}

/** The timelock as WhatsApp's GraphQL answers it (the end in seconds, as text; none when unknown). */
const timelockJson = (restriction: Restriction | undefined): Record<string, unknown> => ({
  is_active: restriction !== undefined,
  ...(restriction?.until != null ? { time_enforcement_ends: String(Math.floor(restriction.until / 1000)) } : {}),
  enforcement_type: 'DEFAULT',
});

/** `<iq xmlns="w:mex">` for the reach-out timelock: the answer; undefined for any other query. */
export const timelockAnswer = (request: BinaryNode, restriction: Restriction | undefined): BinaryNode | undefined => {
  if (getBinaryNodeChild(request, 'query')?.attrs.query_id !== REACHOUT_TIMELOCK_QUERY) return undefined;
  const body = { data: { xwa2_fetch_account_reachout_timelock: timelockJson(restriction) } };
  return {
    tag: 'iq',
    attrs: { id: request.attrs.id ?? '', type: 'result', from: 's.whatsapp.net' },
    content: [{ tag: 'result', attrs: {}, content: Buffer.from(JSON.stringify(body)) }],
  };
};

/** The notification WhatsApp pushes when an account's timelock is set (with its end) or lifted. */
export const timelockNotification = (id: string, restriction: Restriction | undefined): BinaryNode => ({
  tag: 'notification',
  attrs: { id, type: 'mex', from: 's.whatsapp.net', t: String(Math.floor(Date.now() / 1000)) },
  content: [
    {
      tag: 'update',
      attrs: { op_name: 'NotificationUserReachoutTimelockUpdate' },
      content: Buffer.from(JSON.stringify({ data: { xwa2_notify_account_reachout_timelock: timelockJson(restriction) } })),
    },
  ],
});
