import { api, errorText, type ApiError } from '../api.js';
import { h, notice, replace } from '../dom.js';
import { followEvents, type LiveStatus } from '../liveEvents.js';

interface InstanceRow {
  instance_id: string;
  state: string;
  linked_number: string | null;
  state_since: string;
}

/**
 * What a person reads for each state the API answers (an enum such as logged_out is no label); the CSS gives each its
 * own colours (console.css, .state-*). A state this console does not know yet is shown as the API names it.
 */
const STATE_LABELS: ReadonlyMap<string, string> = new Map([
  ['created', 'Not linked'],
  ['connecting', 'Connecting…'],
  ['qr', 'Waiting for scan'],
  ['connected', 'Connected'],
  ['disconnected', 'Disconnected'],
  ['logged_out', 'Logged out'],
  ['failed', 'Failed'],
]);

export const stateBadge = (state: string): HTMLElement => {
  const label = STATE_LABELS.get(state);
  return label ? h('span', { class: `badge state-${state}` }, label) : h('span', { class: 'badge state-unknown' }, state);
};

export const liveBadge = (): { element: HTMLElement; set: (status: LiveStatus) => void } => {
  const element = h('span', { class: 'live', role: 'status' }, 'connecting');
  return { element, set: (status) => replace(element, status === 'live' ? '● live' : status) };
};

/** Pages of list_instances walked to the end: an account may hold more instances than one page (100) shows. */
const MAX_PAGES = 1_000;
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

/** The account's instances with their live state, and "create". Answers a stop function for the live stream. */
export const instancesPage = (root: HTMLElement, open: (id: string) => void, signOut: (error: ApiError) => void): (() => void) => {
  const list = h('div', { 'aria-live': 'polite' }, notice('Loading instances…'));
  const status = h('div', { 'aria-live': 'polite' });
  const live = liveBadge();
  const create = h('button', { type: 'button' }, 'Create instance');
  create.addEventListener('click', () => {
    create.disabled = true;
    api('/create_instance').then(
      (body) => open(String(body.instance_id)),
      (error: unknown) => {
        create.disabled = false;
        replace(status, notice(errorText(error), 'error'));
      },
    );
  });

  const load = async (): Promise<void> => {
    try {
      const rows = await allInstances();
      if (rows.length === 0) return replace(list, notice('No instances yet. Create one to link a phone.', 'empty'));
      replace(
        list,
        h(
          'table',
          {},
          h('caption', { class: 'visually-hidden' }, 'Instances'),
          h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, 'Instance'), h('th', { scope: 'col' }, 'State'), h('th', { scope: 'col' }, 'Number'))),
          h(
            'tbody',
            {},
            ...rows.map((row) =>
              h(
                'tr',
                { 'data-instance': row.instance_id },
                h('td', {}, h('a', { href: `#/instances/${row.instance_id}`, class: 'mono' }, row.instance_id)),
                h('td', {}, stateBadge(row.state)),
                h('td', {}, row.linked_number ?? '—'),
              ),
            ),
          ),
        ),
      );
    } catch (error) {
      replace(list, notice(`Could not load the instances: ${errorText(error)}`, 'error'));
    }
  };

  replace(
    root,
    h('div', { class: 'toolbar' }, h('h1', {}, 'Instances'), live.element),
    h('div', { class: 'card' }, create, status),
    h('section', { class: 'card', 'aria-labelledby': 'instances-heading' }, h('h2', { id: 'instances-heading' }, 'Your instances'), list),
  );
  void load();
  let pending: ReturnType<typeof setTimeout> | undefined;
  return followEvents(
    {},
    (event) => {
      if (!event.type.startsWith('instance.')) return;
      clearTimeout(pending);
      pending = setTimeout(() => void load(), 200);
    },
    live.set,
    signOut,
  );
};
