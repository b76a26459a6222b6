import { api, errorText, type ApiError } from '../api.js';
import { h, notice, replace } from '../dom.js';
import { followEvents, type LiveStatus } from '../liveEvents.js';
import { instanceList } from '../sections/instanceList.js';

/**
 * While a listed instance is in a transient state (a QR code asked for or shown: sections/instanceList.ts), its state
 * is read again this often: no live event says it moved to qr or connecting (QR codes never enter the event log), or
 * back to created when the codes expired.
 */
const TRANSIENT_POLL_MS = 4_000;

export const liveBadge = (): { element: HTMLElement; set: (status: LiveStatus) => void } => {
  const element = h('span', { class: 'live', role: 'status' }, 'connecting');
  return { element, set: (status) => replace(element, status === 'live' ? '● live' : status) };
};

/** The account's instances with their live state, and "create". Answers a stop function for the live stream and polls. */
export const instancesPage = (root: HTMLElement, open: (id: string) => void, signOut: (error: ApiError) => void): (() => void) => {
  const list = instanceList();
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

  replace(
    root,
    h('div', { class: 'toolbar' }, h('h1', {}, 'Instances'), live.element),
    h('div', { class: 'card' }, create, status),
    h('section', { class: 'card', 'aria-labelledby': 'instances-heading' }, h('h2', { id: 'instances-heading' }, 'Your instances'), list.element),
  );

  let stopped = false;
  let poll: ReturnType<typeof setTimeout> | undefined;
  /**
   * The next poll, only while it can show something new: an instance is transient and the tab is seen (a hidden tab
   * asks nothing; it reads at once when seen again). Called after every read, so one timer at most runs.
   */
  const schedule = (): void => {
    clearTimeout(poll);
    if (stopped || document.visibilityState === 'hidden' || !list.hasTransient()) return;
    poll = setTimeout(() => void list.refreshTransient().then(schedule), TRANSIENT_POLL_MS);
  };
  // Seen again: the whole list is read, as instances created meanwhile elsewhere (another tab, a script) make no live event.
  const onVisibility = (): void => {
    if (document.visibilityState === 'hidden') clearTimeout(poll);
    else void list.load().then(schedule);
  };
  document.addEventListener('visibilitychange', onVisibility);
  void list.load().then(schedule);

  let pending: ReturnType<typeof setTimeout> | undefined;
  const stopEvents = followEvents(
    {},
    (event) => {
      if (!event.type.startsWith('instance.')) return;
      clearTimeout(pending);
      pending = setTimeout(() => void list.load().then(schedule), 200);
    },
    live.set,
    signOut,
  );
  return () => {
    stopped = true;
    clearTimeout(poll);
    clearTimeout(pending);
    stopEvents();
    document.removeEventListener('visibilitychange', onVisibility);
  };
};
