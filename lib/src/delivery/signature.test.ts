import { Webhook } from 'standardwebhooks';
import { newWebhookSecret } from '../secrets';
import { webhookHeaders } from './signature';

describe('webhook signatures', () => {
  it('are accepted by the standardwebhooks library, and a tampered body is not', () => {
    const secret = newWebhookSecret();
    const body = JSON.stringify({ id: 'evt_1_0', type: 'instance.reset' });
    const headers = webhookHeaders(secret, 'evt_1_0', body, new Date());
    expect(headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]+=*$/);
    expect(new Webhook(secret).verify(body, headers)).toEqual(JSON.parse(body));
    expect(() => new Webhook(secret).verify(body.replace('reset', 'other'), headers)).toThrow();
    expect(() => new Webhook(newWebhookSecret()).verify(body, headers)).toThrow();
  });
});
