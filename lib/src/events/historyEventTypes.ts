import { INSTANCE_EVENT_VERSIONS } from './instanceEvents';
import { MESSAGE_EVENT_TYPES } from './messageEvents';

/**
 * Every event type an instance's history can hold (the `types` filter of /v1/history and its export): the log's names,
 * not the webhook ones (`message.received`) that /v1/events, replay_webhooks and set_webhook take.
 */
export const HISTORY_EVENT_TYPES: readonly string[] = [...Object.keys(INSTANCE_EVENT_VERSIONS), ...MESSAGE_EVENT_TYPES];
