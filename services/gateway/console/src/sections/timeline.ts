import { api, errorText } from '../api.js';
import { field, h, notice, replace } from '../dom.js';
import { eventSummary } from '../eventSummary.js';

interface HistoryEvent {
  sequence: number;
  stream: string;
  type: string;
  occurred_at: string;
  data: Record<string, unknown>;
}

/** The instance's history as a timeline that grows live, with a type and a message filter. */
export const timelineSection = (id: string) => {
  // The type filter offers the types this instance's history holds (the server names them; no list to keep here).
  const type = h('select', {}, h('option', { value: '' }, 'All events'));
  const offered = new Set<string>();
  const offer = (eventType: string): void => {
    if (offered.has(eventType)) return;
    offered.add(eventType);
    type.append(h('option', { value: eventType }, eventType));
  };
  const messageId = h('input', { type: 'text', placeholder: 'a message_id', maxlength: '128' });
  const list = h('ol', { class: 'timeline', 'aria-live': 'polite', 'aria-relevant': 'additions' });
  const status = h('div', {}, notice('Loading the history…'));
  let next = 0;
  /** The sequence of the newest commit shown: the live timeline goes on from it (see `more`). */
  let seen = 0;
  let generation = 0;
  let loading: Promise<void> = Promise.resolve();

  const render = (event: HistoryEvent): HTMLElement =>
    h(
      'li',
      { 'data-type': event.type },
      h('time', { datetime: event.occurred_at }, new Date(event.occurred_at).toLocaleTimeString()),
      h('span', { class: 'event-type' }, event.type),
      h('span', { class: 'event-summary' }, eventSummary(event.data)),
    );

  /** Reads every page from `next` on (bounded by the end of the log at the time of the read). */
  const more = async (): Promise<void> => {
    const mine = generation;
    try {
      for (let page = 0; page < 50; page++) {
        const body = await api('/history', { instance_id: id, cursor: next, limit: 200, types: type.value, message_id: messageId.value.trim() });
        if (mine !== generation) return;
        const events = body.events as HistoryEvent[];
        const shown = seen;
        for (const event of events) {
          // The commit the cursor named is read again (a cursor is inclusive): shown already.
          if (event.sequence <= shown) continue;
          offer(event.type);
          list.prepend(render(event));
          seen = Math.max(seen, event.sequence);
        }
        const cursor = body.next_cursor as number | null;
        // At the end the next read starts at the newest commit shown, not at the sequence after it: a cursor must be a
        // commit of this history, and other instances' commits (any account's) come in between. The sequence after it
        // was refused (invalid_cursor) as soon as another instance had an event, and the timeline stopped for good.
        next = cursor ?? seen;
        if (cursor === null) break;
      }
      replace(status, list.childElementCount === 0 ? notice('No events match.', 'empty') : null);
    } catch (error) {
      if (mine === generation) replace(status, notice(`Could not load the history: ${errorText(error)}`, 'error'));
    }
  };
  const refresh = (): void => {
    loading = loading.then(more);
  };
  const reload = (): void => {
    generation++;
    next = 0;
    seen = 0;
    list.replaceChildren();
    replace(status, notice('Loading the history…'));
    refresh();
  };
  type.addEventListener('change', reload);
  messageId.addEventListener('change', reload);

  const element = h(
    'section',
    { class: 'card', 'aria-labelledby': 'tl-heading' },
    h('h2', { id: 'tl-heading' }, 'Timeline (newest first)'),
    h('div', { class: 'inline' }, field('Event type', type), field('Message', messageId)),
    status,
    list,
  );
  reload();
  return { element, refresh };
};
