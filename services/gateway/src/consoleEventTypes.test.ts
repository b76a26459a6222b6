import { WEBHOOK_EVENT_TYPE_NAMES } from '@wagw/lib';
import { filterText, WEBHOOK_EVENT_TYPES } from '../console/src/webhookEventTypes';

describe("the console's webhook event types", () => {
  it('are the API types, in its order', () => {
    expect(WEBHOOK_EVENT_TYPES).toEqual(WEBHOOK_EVENT_TYPE_NAMES);
  });

  it('show a filter of every type as empty (every type, new ones too), any other as its list', () => {
    expect(filterText(WEBHOOK_EVENT_TYPE_NAMES)).toBe('');
    expect(filterText(['message.received', 'message.failed'])).toBe('message.received, message.failed');
  });
});
