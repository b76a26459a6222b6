import { invalidArgument } from '../errors';
import { INSTANCE_ID_PATTERN } from '../ids';
import { LIMITS } from './rules';

const instanceIdRegex = new RegExp(INSTANCE_ID_PATTERN);

export const assertInstanceId = (instanceId: string): void => {
  if (!instanceIdRegex.test(instanceId)) {
    throw invalidArgument('invalid_instance_id', 'instance_id must be 20 upper-case hexadecimal characters');
  }
};

/** A webhook URL is absolute http(s), at most 2,048 characters, with no credentials in it. */
export const assertWebhookUrl = (url: string): void => {
  if (url.length === 0) throw invalidArgument('invalid_webhook_url', 'webhook_url is required');
  if (url.length > LIMITS.url) {
    throw invalidArgument('invalid_webhook_url', `webhook_url must be at most ${LIMITS.url} characters`);
  }
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw invalidArgument('invalid_webhook_url', 'webhook_url must be an absolute http(s) URL');
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    throw invalidArgument('invalid_webhook_url', 'webhook_url must use http or https');
  }
  if (parsed.username || parsed.password) {
    throw invalidArgument('invalid_webhook_url', 'webhook_url must not carry credentials');
  }
};
