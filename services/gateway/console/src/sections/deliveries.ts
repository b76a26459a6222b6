import { api, errorText } from '../api.js';
import { h, notice, replace } from '../dom.js';
import { deliveryItem, type Delivery } from './deliveryItem.js';

/** Deliveries per read: the newest page is polled; "Show older" reads the next one. */
const PAGE_SIZE = 50;
/** A poll walks at most this many pages to reach the oldest delivery shown (a bound, should that one be gone). */
const MAX_POLL_PAGES = 40;

interface Page {
  deliveries: Delivery[];
  next: string | null;
}

/** Where the keyboard focus is in the list: a delivery, on its row (after "Show older") or on its button. */
interface Focus {
  delivery: string;
  onButton: boolean;
}

/**
 * Webhook deliveries, newest first, each with every attempt, and a redeliver button for failed ones; older pages on
 * request. `onGone` is called when a delivery was answered 410 Gone: the gateway then switched the webhook off, which
 * no live event says, so the page reads the instance's settings again.
 */
export const deliveriesSection = (id: string, onGone: () => void) => {
  const list = h('div', { 'aria-live': 'polite' }, notice('Loading deliveries…'));
  const problem = h('div', { 'aria-live': 'polite' });
  const result = h('div', { 'aria-live': 'polite' });
  const older = h('button', { type: 'button', class: 'older', hidden: true }, 'Show older deliveries');

  /** What is shown: every page read so far, newest first, and the cursor past the last one (null: nothing older). */
  let shown: Delivery[] = [];
  let next: string | null = null;
  /** Older pages were read: a poll then reads down to the oldest shown, not just the newest page (or they vanish). */
  let extended = false;
  let drawn = '';
  const goneSeen = new Set<string>();
  /** Polls, refreshes and "Show older" run one at a time: each draws from what the one before left. */
  let queue: Promise<void> = Promise.resolve();
  const serially = (task: () => Promise<void>): Promise<void> => (queue = queue.then(task));

  const readPage = async (cursor: string | undefined): Promise<Page> => {
    const body = await api('/webhook_deliveries', { instance_id: id, limit: PAGE_SIZE, cursor });
    return { deliveries: body.deliveries as Delivery[], next: typeof body.next_cursor === 'string' ? body.next_cursor : null };
  };

  const focusNow = (): Focus | null => {
    const active = document.activeElement;
    if (!(active instanceof HTMLElement) || !list.contains(active)) return null;
    const delivery = active.closest('li[data-delivery]')?.getAttribute('data-delivery');
    return delivery ? { delivery, onButton: active.tagName === 'BUTTON' } : null;
  };

  /** Draws `deliveries` unless the list shows them already (focus and screen readers then stay where they are). */
  const draw = (deliveries: Delivery[], cursor: string | null, focusTo: Focus | null = null): void => {
    const read = JSON.stringify([deliveries, cursor]);
    shown = deliveries;
    next = cursor;
    older.hidden = cursor === null;
    if (deliveries.some((d) => d.attempts.some((a) => a.outcome === 'gone') && !goneSeen.has(d.delivery_id))) {
      for (const d of deliveries) if (d.attempts.some((a) => a.outcome === 'gone')) goneSeen.add(d.delivery_id);
      onGone();
    }
    if (read === drawn && focusTo === null) return;
    drawn = read;
    if (deliveries.length === 0) return replace(list, notice('No deliveries yet (set a webhook first).', 'empty'));
    // A changed list is drawn anew: the keyboard focus goes back to where it was (the list polls every 3 s).
    const focus = focusTo ?? focusNow();
    replace(list, h('ul', { class: 'deliveries' }, ...deliveries.map((d) => deliveryItem(d, redeliver))));
    if (!focus) return;
    const item = list.querySelector<HTMLElement>(`li[data-delivery="${CSS.escape(focus.delivery)}"]`);
    (focus.onButton ? (item?.querySelector<HTMLElement>('button') ?? item) : item)?.focus();
  };

  /** Reads the newest page, and on down to the oldest delivery shown when older pages were asked for. */
  const load = (): Promise<void> =>
    serially(async () => {
      try {
        const oldest = extended ? shown.at(-1)?.delivery_id : undefined;
        const read: Delivery[] = [];
        let cursor: string | undefined;
        let page: Page = { deliveries: [], next: null };
        for (let i = 0; i < MAX_POLL_PAGES; i++) {
          page = await readPage(cursor);
          read.push(...page.deliveries);
          if (oldest === undefined || page.next === null || page.deliveries.some((d) => d.delivery_id === oldest)) break;
          cursor = page.next;
        }
        replace(problem);
        draw(read, page.next);
      } catch (error) {
        // What is shown stays (older pages too): the next poll may well work.
        replace(problem, notice(`Could not load the deliveries: ${errorText(error)}`, 'error'));
      }
    });

  const showOlder = (): Promise<void> =>
    serially(async () => {
      if (next === null) return;
      try {
        const page = await readPage(next);
        const known = new Set(shown.map((d) => d.delivery_id));
        const added = page.deliveries.filter((d) => !known.has(d.delivery_id));
        extended = true;
        replace(problem);
        // The button stays focused while there is more; once it hides, the focus goes to the first delivery it brought.
        const first = added[0]?.delivery_id;
        draw([...shown, ...added], page.next, page.next === null && first ? { delivery: first, onButton: false } : null);
      } catch (error) {
        replace(problem, notice(`Could not load older deliveries: ${errorText(error)}`, 'error'));
      }
    });
  older.addEventListener('click', () => void showOlder());

  /** Redeliveries asked for and not answered yet: a double click asks once (the second answered delivery_not_failed over the first's success). */
  const redelivering = new Set<string>();
  const redeliver = (deliveryId: string): void => {
    if (redelivering.has(deliveryId)) return;
    redelivering.add(deliveryId);
    api('/redeliver_webhooks', { instance_id: id, delivery_id: deliveryId })
      .then(
        () => {
          replace(result, notice(`Redelivery of ${deliveryId} scheduled.`, 'ok'));
          void load();
        },
        (error: unknown) => replace(result, notice(errorText(error), 'error')),
      )
      .finally(() => redelivering.delete(deliveryId));
  };

  let pending: ReturnType<typeof setTimeout> | undefined;
  const element = h(
    'section',
    { class: 'card', 'aria-labelledby': 'dl-heading' },
    h('div', { class: 'toolbar' }, h('h2', { id: 'dl-heading' }, 'Webhook deliveries'), h('button', { type: 'button', onclick: () => void load() }, 'Refresh')),
    result,
    problem,
    list,
    older,
  );
  void load();
  return {
    element,
    /** Deliveries change a moment after each event (attempts, retries): read again shortly after. */
    refresh: (): void => {
      clearTimeout(pending);
      pending = setTimeout(() => void load(), 500);
    },
    stop: (): void => clearTimeout(pending),
  };
};
