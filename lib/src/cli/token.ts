import { issueToken } from '../auth';
import { loadJwtSecret, resolveDataDir } from '../launcher/dataDir';

/** `npm run token -- --account NAME [--days N]`: prints a token for an account. */
const args = process.argv.slice(2);
const option = (name: string): string | undefined => {
  const index = args.indexOf(`--${name}`);
  return index >= 0 ? args[index + 1] : undefined;
};

const account = option('account');
const days = Number(option('days') ?? '30');
if (!account || !Number.isInteger(days) || days < 1) {
  process.stderr.write('usage: npm run token -- --account NAME [--days N]\n');
  process.exit(2);
}
try {
  process.stdout.write(`${issueToken(loadJwtSecret(resolveDataDir()), account, days * 86_400)}\n`);
} catch (error) {
  process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(2);
}
