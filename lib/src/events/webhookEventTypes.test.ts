import { parseWebhookEventFilter, parseWebhookEventTypes, WEBHOOK_EVENT_TYPE_NAMES } from './webhookEventTypes';

const codeOf = (run: () => unknown): string | undefined => {
  try {
    run();
    return undefined;
  } catch (error) {
    return (error as { code?: string }).code;
  }
};

describe('parseWebhookEventFilter', () => {
  it('reads an absent or empty filter (what the console sends for "every type") as every type', () => {
    expect(parseWebhookEventFilter('')).toEqual([]);
    expect(parseWebhookEventFilter([])).toEqual([]);
  });

  it('takes a list with a stray separator among the types it names', () => {
    expect(parseWebhookEventFilter('message.failed, message.received,')).toEqual(['message.received', 'message.failed']);
  });

  it.each([',', ' , ', ',,', ' '])('refuses %j, which names no type, with 400 invalid_events instead of reading it as every type', (value) => {
    let thrown: unknown;
    try {
      parseWebhookEventFilter(value);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toMatchObject({ kind: 'invalid_argument', code: 'invalid_events' });
    expect((thrown as Error).message).toContain(`known: ${WEBHOOK_EVENT_TYPE_NAMES.join(', ')}`);
  });

  it('refuses a split list of blanks alike (a gRPC caller)', () => {
    expect(codeOf(() => parseWebhookEventFilter(['', ' ']))).toBe('invalid_events');
  });

  it('refuses the same mistake in the types filter of /v1/events and /v1/replay_webhooks with its own code', () => {
    expect(codeOf(() => parseWebhookEventTypes(',', 'types'))).toBe('invalid_types');
    expect(parseWebhookEventTypes('', 'types')).toEqual([]);
  });
});
