import { api, ApiError, errorText } from '../api.js';
import { h, notice, replace } from '../dom.js';
import { stateBadge } from './stateBadge.js';

/** An instance as list_instances and status answer it (the fields the list shows). */
export interface InstanceRow {
  instance_id: string;
  state: string;
  linked_number: string | null;
  state_since: string;
}

/** Instances per page of list_instances (its default limit): how many calls a full read of the list takes. */
const LIST_PAGE = 100;
/** Pages of list_instances walked to the end: an account may hold more instances than one page (100) shows. */
const MAX_PAGES = 1_000;
/**
 * How long an instance that became `created` (new, reset, its QR codes expired) counts as about to be linked: a QR
 * code is usually asked for right after (no live event says so). Older ones are at rest, and not polled.
 */
const CREATED_WATCH_MS = 5 * 60_000;

/**
 * States that end without a live event: a QR code shown (qr) or being fetched (connecting) ends linked
 * (instance.connected) or back at created (expired: no event); a fresh `created` becomes qr when any client asks for
 * a code. The time is this browser's clock against the gateway's state_since (a skew only moves the window).
 */
const isTransient = (row: InstanceRow, now: number): boolean =>
  row.state === 'qr' || row.state === 'connecting' || (row.state === 'created' && now - Date.parse(row.state_since) < CREATED_WATCH_MS);

const allInstances = async (): Promise<InstanceRow[]> => {
  const rows: InstanceRow[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < MAX_PAGES; page++) {
    const body = await api('/list_instances', { cursor });
    rows.push(...((body.instances as InstanceRow[] | undefined) ?? []));
    cursor = typeof body.next_cursor === 'string' ? body.next_cursor : undefined;
    if (cursor === undefined) break;
  }
  return rows;
};

const rowOf = (body: Record<string, unknown>): InstanceRow => ({
  instance_id: String(body.instance_id),
  state: String(body.state),
  linked_number: typeof body.linked_number === 'string' ? body.linked_number : null,
  state_since: String(body.state_since),
});

const cells = (row: InstanceRow): HTMLElement[] => [
  h('td', {}, h('a', { href: `#/instances/${row.instance_id}`, class: 'mono' }, row.instance_id)),
  h('td', {}, stateBadge(row.state)),
  h('td', {}, row.linked_number ?? '—'),
];

/**
 * The account's instances with their state. `load` reads every page and draws the table anew only when it changed,
 * keeping the keyboard focus on its row; `refreshTransient` reads again only the instances in a transient state and
 * changes their rows in place. Reads run one at a time, so an older answer never overwrites a newer one.
 */
export const instanceList = () => {
  const element = h('div', { 'aria-live': 'polite' }, notice('Loading instances…'));
  let rows: InstanceRow[] = [];
  let drawn = '';
  let queue: Promise<void> = Promise.resolve();
  const serially = (task: () => Promise<void>): Promise<void> => (queue = queue.then(task));

  const focusedRow = (): string | null => {
    const active = document.activeElement;
    if (!(active instanceof HTMLElement) || !element.contains(active)) return null;
    return active.closest('tr[data-instance]')?.getAttribute('data-instance') ?? null;
  };

  const draw = (read: InstanceRow[]): void => {
    rows = read;
    const json = JSON.stringify(read);
    if (json === drawn) return;
    drawn = json;
    if (read.length === 0) return replace(element, notice('No instances yet. Create one to link a phone.', 'empty'));
    // Drawn anew (the list changes on events and polls): the keyboard focus goes back to the row it was on.
    const focus = focusedRow();
    replace(
      element,
      h(
        'table',
        {},
        h('caption', { class: 'visually-hidden' }, 'Instances'),
        h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, 'Instance'), h('th', { scope: 'col' }, 'State'), h('th', { scope: 'col' }, 'Number'))),
        h('tbody', {}, ...read.map((row) => h('tr', { 'data-instance': row.instance_id, 'data-state': row.state }, ...cells(row)))),
      ),
    );
    if (focus) element.querySelector<HTMLElement>(`tr[data-instance="${CSS.escape(focus)}"] a`)?.focus();
  };

  /** One row's new state, put in place: its link (and the focus on it) stays, only the badge and number change. */
  const update = (row: InstanceRow): void => {
    const index = rows.findIndex((r) => r.instance_id === row.instance_id);
    if (index < 0 || JSON.stringify(rows[index]) === JSON.stringify(row)) return;
    rows = rows.map((r, i) => (i === index ? row : r));
    drawn = JSON.stringify(rows);
    const tr = element.querySelector<HTMLElement>(`tr[data-instance="${CSS.escape(row.instance_id)}"]`);
    if (!tr) return;
    tr.setAttribute('data-state', row.state);
    const [, state, number] = tr.children;
    if (state) replace(state, stateBadge(row.state));
    if (number) replace(number, row.linked_number ?? '—');
  };

  const readAll = async (): Promise<void> => {
    try {
      draw(await allInstances());
    } catch (error) {
      drawn = '';
      replace(element, notice(`Could not load the instances: ${errorText(error)}`, 'error'));
    }
  };

  const load = (): Promise<void> => serially(readAll);

  const refreshTransient = (): Promise<void> =>
    serially(async () => {
      // The last read of the list failed (its error is shown): read it again rather than rows no longer on screen.
      if (drawn === '') return readAll();
      const now = Date.now();
      const ids = rows.filter((row) => isTransient(row, now)).map((row) => row.instance_id);
      // Whichever takes fewer calls: the list (a call a page, and it shows new instances too) or a status each.
      if (ids.length > Math.ceil(rows.length / LIST_PAGE)) return readAll();
      for (const id of ids) {
        try {
          update(rowOf(await api('/status', { instance_id: id })));
        } catch (error) {
          // Gone from the account (404): the whole list is read again. A passing error: the next poll asks again.
          if (error instanceof ApiError && error.status === 404) return readAll();
        }
      }
    });

  return {
    element,
    load,
    refreshTransient,
    /** Whether any instance shown is in a transient state (a poll is worth it). */
    hasTransient: (): boolean => {
      const now = Date.now();
      return rows.some((row) => isTransient(row, now));
    },
  };
};
