import { ACCOUNT_PATTERN, assertTokenId, issueToken, parseScopes, storeRevocation } from '../auth';
import { existingJwtSecret, resolveDataDir } from '../launcher/dataDir';
import { createLogger } from '../log';
import { connectNats } from '../nats';
import { assertInstanceId } from '../validation';
import { NATS_PATIENCE_MS } from './patience';

/**
 * `npm run token -- --account NAME [--days N] [--instance ID --scopes send,read,manage]`: prints a token (stdout) and
 * its id (stderr). `npm run token -- revoke ID --account NAME` (with NATS_URL): revokes one of the account's tokens.
 */
const args = process.argv.slice(2);
/** Tokens always expire, and not in centuries: ten years at most. */
const MAX_DAYS = 3650;
const USAGE =
  `usage: npm run token -- --account NAME [--days N (1-${MAX_DAYS}, default 30)] [--instance ID --scopes send,read,manage]\n` +
  '       NATS_URL=nats://... npm run token -- revoke TOKEN_ID --account NAME\n';

const fail = (message: string): never => {
  process.stderr.write(message.endsWith('\n') ? message : `${message}\n`);
  process.exit(2);
};

const option = (name: string): string | undefined => {
  const index = args.indexOf(`--${name}`);
  if (index < 0) return undefined;
  const value = args[index + 1];
  // An option as the last word, followed by the next option, or empty (an unset shell variable) is a slip, not a
  // request for the default: `--instance "$ID"` with no ID would otherwise issue an account token.
  return value === undefined || value === '' || value.startsWith('--') ? fail(`--${name} needs a value\n${USAGE}`) : value;
};

const OPTIONS = new Set(['--account', '--days', '--instance', '--scopes']);
/** Revoking takes the account only: `--days` there was taken silently and meant nothing. */
const REVOKE_OPTIONS = new Set(['--account']);

/**
 * Every word is a known option or its value, after `revoke TOKEN_ID` when revoking: a mistyped option (`--instanse`)
 * was dropped, and an account token issued where an instance token was asked for.
 */
const assertKnownWords = (): void => {
  if (args[0] === 'revoke' && (args[1] === undefined || args[1].startsWith('--'))) fail(`revoke needs a TOKEN_ID\n${USAGE}`);
  const revoking = args[0] === 'revoke';
  const rest = revoking ? args.slice(2) : args;
  const seen = new Set<string>();
  for (let i = 0; i < rest.length; i++) {
    const word = rest[i]!;
    if (revoking && OPTIONS.has(word) && !REVOKE_OPTIONS.has(word)) fail(`${word} is for issuing a token; revoke takes --account only\n${USAGE}`);
    if (!OPTIONS.has(word)) fail(`${word.startsWith('-') ? 'unknown option' : 'unexpected word'} ${JSON.stringify(word)}\n${USAGE}`);
    // `--scopes send --scopes read,manage` took the first: which one was meant is not ours to guess.
    if (seen.has(word)) fail(`${word} given more than once: give it once\n${USAGE}`);
    seen.add(word);
    // Its value, unless the option lacks one (option() says so).
    if (rest[i + 1] !== undefined && !rest[i + 1]!.startsWith('--')) i++;
  }
};

const issue = (account: string): void => {
  const daysText = option('days') ?? '30';
  // Digits only: Number() would take 1e300 (a token for ever, in effect), 0x10 or 1.5.
  const days = /^\d+$/.test(daysText) ? Number(daysText) : NaN;
  if (!(days >= 1 && days <= MAX_DAYS)) fail(`--days: a whole number of days from 1 to ${MAX_DAYS}, got ${daysText}`);
  const instanceId = option('instance');
  const scopes = option('scopes');
  if ((instanceId === undefined) !== (scopes === undefined)) fail('an instance token needs both --instance and --scopes');
  if (instanceId !== undefined) assertInstanceId(instanceId);
  const limits = instanceId !== undefined && scopes !== undefined ? { instanceId, scopes: parseScopes(scopes) } : {};
  const dataDir = resolveDataDir();
  // A secret made here would sign tokens no gateway takes (401 invalid_token): the gateway's DATA_DIR was meant.
  const secret =
    existingJwtSecret(dataDir) ??
    fail(`no gateway secret in ${dataDir} (jwt-secret): run npm start first, or set DATA_DIR to the gateway's (or AUTH_JWT_SECRET)`);
  const token = issueToken(secret, account, days * 86_400, limits);
  const claims = JSON.parse(Buffer.from(token.split('.')[1] ?? '', 'base64url').toString('utf8')) as { jti: string };
  process.stdout.write(`${token}\n`);
  process.stderr.write(`token id: ${claims.jti} (revoke: /v1/revoke_token?token_id=${claims.jti})\n`);
};

const revoke = async (account: string, tokenId: string): Promise<void> => {
  const url = process.env.NATS_URL;
  // The id's form first: a mistyped id was reported only after NATS answered (5 s and NATS's error when unreachable).
  assertTokenId(tokenId);
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
  assertKnownWords();
  const account = option('account');
  if (!account) return fail(USAGE);
  // Checked for revoke too: a name no token can carry revokes nothing, and said "revoked".
  if (!ACCOUNT_PATTERN.test(account)) return fail(`--account: 1-64 letters, digits, _ . @ - (starting with a letter or digit), got ${JSON.stringify(account)}`);
  if (args[0] === 'revoke') return revoke(account, args[1] ?? '');
  issue(account);
};

main().catch((error: unknown) => fail(error instanceof Error ? error.message : String(error)));
