import { issueToken, parseScopes, storeRevocation } from '../auth';
import { loadJwtSecret, resolveDataDir } from '../launcher/dataDir';
import { createLogger } from '../log';
import { connectNats } from '../nats';
import { NATS_PATIENCE_MS } from './patience';

/**
 * `npm run token -- --account NAME [--days N] [--instance ID --scopes send,read,manage]`: prints a token (stdout) and
 * its id (stderr). `npm run token -- revoke ID --account NAME` (with NATS_URL): revokes one of the account's tokens.
 */
const args = process.argv.slice(2);
const option = (name: string): string | undefined => {
  const index = args.indexOf(`--${name}`);
  return index >= 0 ? args[index + 1] : undefined;
};
const USAGE =
  'usage: npm run token -- --account NAME [--days N] [--instance ID --scopes send,read,manage]\n' +
  '       NATS_URL=nats://... npm run token -- revoke TOKEN_ID --account NAME\n';

const fail = (message: string): never => {
  process.stderr.write(message.endsWith('\n') ? message : `${message}\n`);
  process.exit(2);
};

const issue = (account: string): void => {
  const days = Number(option('days') ?? '30');
  if (!Number.isInteger(days) || days < 1) fail(USAGE);
  const instanceId = option('instance');
  const scopes = option('scopes');
  if ((instanceId === undefined) !== (scopes === undefined)) fail('an instance token needs both --instance and --scopes');
  const token = issueToken(loadJwtSecret(resolveDataDir()), account, days * 86_400, instanceId && scopes ? { instanceId, scopes: parseScopes(scopes) } : {});
  const claims = JSON.parse(Buffer.from(token.split('.')[1] ?? '', 'base64url').toString('utf8')) as { jti: string };
  process.stdout.write(`${token}\n`);
  process.stderr.write(`token id: ${claims.jti} (revoke: /v1/revoke_token?token_id=${claims.jti})\n`);
};

const revoke = async (account: string, tokenId: string): Promise<void> => {
  const url = process.env.NATS_URL;
  if (!url) fail("revoke needs NATS_URL (the gateway cluster's NATS), or call /v1/revoke_token with an account token");
  // A wrong NATS_URL fails after a few seconds with one line, instead of retrying for ever as a service would.
  const nats = await connectNats({ url: url ?? '', name: 'token-cli', logger: createLogger('token', 'warn'), giveUpAfterMs: NATS_PATIENCE_MS });
  try {
    await storeRevocation(nats, account, tokenId);
    process.stderr.write(`revoked ${tokenId} of ${account}\n`);
  } finally {
    await nats.close();
  }
};

const main = async (): Promise<void> => {
  const account = option('account');
  if (!account) return fail(USAGE);
  if (args[0] === 'revoke') return revoke(account, args[1] ?? '');
  issue(account);
};

main().catch((error: unknown) => fail(error instanceof Error ? error.message : String(error)));
