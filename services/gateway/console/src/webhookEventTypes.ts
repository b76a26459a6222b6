/**
 * The webhook event types, as the API names them (lib's WEBHOOK_EVENT_TYPE_NAMES, which the console, a browser
 * bundle, cannot import; `consoleEventTypes.test.ts` fails when the two differ). `status` lists every type for a
 * webhook without a filter; the form shows that as an empty filter, so a save keeps it "every type", new ones too.
 */
export const WEBHOOK_EVENT_TYPES: readonly string[] = [
  'message.received',
  'message.sent',
  'message.delivered',
  'message.read',
  'message.failed',
  'instance.connected',
  'instance.disconnected',
  'instance.logged_out',
  'instance.failed',
  'instance.reset',
  'instance.restricted',
  'instance.restriction_lifted',
  'instance.data_erased',
];

/** The filter as the form shows it: empty for every type, else the types listed, comma-separated. */
export const filterText = (events: readonly string[]): string => (WEBHOOK_EVENT_TYPES.every((type) => events.includes(type)) ? '' : events.join(', '));
