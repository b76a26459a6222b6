import type { TestStack } from './stack';
import { sleep } from './wait';

/**
 * A text send retried while the cluster answers 503 (an instance between replicas), under one idempotency key so
 * every retry names the same message: what a careful client does. Resolves with the message id.
 */
export const retriedSend = async (stack: TestStack, instanceId: string, idempotencyKey: string, text: string): Promise<string> => {
  for (let attempt = 0; attempt < 100; attempt++) {
    const response = await stack.call('/v1/send', {
      method: 'POST',
      headers: { 'idempotency-key': idempotencyKey },
      body: JSON.stringify({ instance_id: instanceId, number: '4915199999999', type: 'text', message: text }),
    });
    if (response.status === 200) return response.body.message_id as string;
    if (response.status !== 503) throw new Error(`send '${text}' answered ${response.status}: ${JSON.stringify(response.body)}`);
    await sleep(100);
  }
  throw new Error(`send '${text}' was never accepted`);
};
