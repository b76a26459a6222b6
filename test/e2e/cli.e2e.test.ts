import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import {
  CheckpointStore,
  connectNats,
  freePort,
  instanceEvent,
  instanceStream,
  JetStreamEventStore,
  rebuildInstanceStates,
  type Checkpoint,
  type NatsHandle,
} from '@wagw/lib';
import { loadJwtSecret } from '../../lib/src/launcher/dataDir';
import { testLogger } from '../harness/logger';
import { startTestNats, type TestNats } from '../harness/natsServer';

const ROOT = resolve(__dirname, '../..');

interface Run {
  /** The exit code, or 'still running' when it had to be killed after the test's patience ran out. */
  code: number | null | 'still running';
  stdout: string;
  stderr: string;
  ms: number;
}

/** Runs a built CLI (`npm run token`, `npm run rebuild` run these after building) with `env` added. */
const run = (script: string, args: string[], env: NodeJS.ProcessEnv, patienceMs = 20_000): Promise<Run> =>
  new Promise((done) => {
    const started = Date.now();
    const child = spawn(process.execPath, [join(ROOT, script), ...args], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    let stillRunning = false;
    const timer = setTimeout(() => {
      stillRunning = true;
      child.kill('SIGKILL');
    }, patienceMs);
    child.once('exit', (code) => {
      clearTimeout(timer);
      done({ code: stillRunning ? 'still running' : code, stdout, stderr, ms: Date.now() - started });
    });
  });

const claimsOf = (token: string): { exp: number; iat: number; inst?: string; scope?: string } =>
  JSON.parse(Buffer.from(token.split('.')[1] ?? '', 'base64url').toString('utf8')) as { exp: number; iat: number; inst?: string; scope?: string };

describe('npm run token (issuing)', () => {
  let dataDir: string;
  const token = (args: string[]): Promise<Run> => run('lib/dist/cli/token.js', args, { DATA_DIR: dataDir, AUTH_JWT_SECRET: '' });
  beforeAll(() => {
    dataDir = mkdtempSync(join(tmpdir(), 'wagw-cli-token-'));
    // The secret a gateway started on this DATA_DIR made.
    loadJwtSecret(dataDir, {});
  });

  it('refuses a DATA_DIR without a gateway secret instead of making one whose tokens no gateway takes', async () => {
    const elsewhere = mkdtempSync(join(tmpdir(), 'wagw-cli-nogateway-'));
    try {
      const result = await run('lib/dist/cli/token.js', ['--account', 'acme'], { DATA_DIR: elsewhere, AUTH_JWT_SECRET: '' });
      expect({ code: result.code, stdout: result.stdout, stderr: result.stderr }).toEqual({
        code: 2,
        stdout: '',
        stderr: expect.stringContaining(`no gateway secret in ${elsewhere}`) as unknown,
      });
      expect(existsSync(join(elsewhere, 'jwt-secret'))).toBe(false);
    } finally {
      rmSync(elsewhere, { recursive: true, force: true });
    }
  });
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

  it('issues a token for the days asked, up to 3650', async () => {
    const result = await token(['--account', 'acme', '--days', '3650']);
    expect(result.code).toBe(0);
    const { exp, iat } = claimsOf(result.stdout.trim());
    expect(exp - iat).toBe(3650 * 86_400);
  });

  it('refuses --days without a number instead of issuing a 30-day token', async () => {
    for (const args of [
      ['--account', 'acme', '--days'],
      ['--days', '--account', 'acme'],
    ]) {
      const result = await token(args);
      expect({ code: result.code, stdout: result.stdout, stderr: result.stderr }).toEqual({
        code: 2,
        stdout: '',
        stderr: expect.stringContaining('--days needs a value') as unknown,
      });
    }
  });

  it('refuses an empty --instance or --scopes (an unset shell variable) instead of issuing an account token', async () => {
    const id = '0123456789ABCDEF0123';
    for (const args of [
      ['--instance', '', '--scopes', 'send'],
      ['--instance', id, '--scopes', ''],
      ['--instance', id, '--scopes', ','],
      ['--instance', 'not-an-id', '--scopes', 'send'],
      ['--instance', id, '--scopes', 'send,admin'],
    ]) {
      const result = await token(['--account', 'acme', ...args]);
      expect({ args, code: result.code, stdout: result.stdout }).toEqual({ args, code: 2, stdout: '' });
    }
    const scoped = await token(['--account', 'acme', '--instance', id, '--scopes', 'send,read']);
    expect(claimsOf(scoped.stdout.trim())).toMatchObject({ inst: id, scope: 'send read' });
  });

  it('refuses a mistyped option or a stray word (usage, exit 2) instead of issuing a token wider than asked for', async () => {
    const id = '0123456789ABCDEF0123';
    for (const [args, said] of [
      [['--account', 'acme', '--instanse', id, '--scope', 'send'], 'unknown option "--instanse"'],
      [['--account', 'acme', '--bogus'], 'unknown option "--bogus"'],
      [['--account', 'acme', 'revoke'], 'unexpected word "revoke"'],
      [['revoke', '--account', 'acme'], 'revoke needs a TOKEN_ID'],
      [['revoke', 'abc', '--account', 'acme', '--force'], 'unknown option "--force"'],
      // Taken silently before, and meaningless: a revocation has no lifetime or scopes.
      [['revoke', '0123456789abcdef0123456789abcdef', '--account', 'acme', '--days', '5'], '--days is for issuing a token; revoke takes --account only'],
      // Repeated, the first was taken: an instance token with fewer scopes, or another account's.
      [['--account', 'acme', '--instance', id, '--scopes', 'send', '--scopes', 'read,manage'], '--scopes given more than once: give it once'],
      [['--account', 'acme', '--account', 'other'], '--account given more than once: give it once'],
    ] as const) {
      const result = await token([...args]);
      expect({ args, code: result.code, stdout: result.stdout, stderr: result.stderr }).toEqual({
        args,
        code: 2,
        stdout: '',
        stderr: expect.stringMatching(new RegExp(`^${said}\\n(.|\\n)*usage:`)) as unknown,
      });
    }
  });

  it('refuses an account name no token can carry, for revoke too (it said "revoked")', async () => {
    for (const args of [
      ['--account', 'bad name'],
      ['revoke', '0123456789abcdef0123456789abcdef', '--account', 'bad name'],
    ]) {
      const result = await token(args);
      expect({ args, code: result.code, stderr: result.stderr }).toEqual({
        args,
        code: 2,
        stderr: expect.stringContaining('--account: 1-64 letters') as unknown,
      });
    }
  });

  it('refuses a lifetime beyond 3650 days (tokens always expire) and one that is not a whole number of days', async () => {
    for (const days of ['1e300', '3651', '1.5', '0', '-3']) {
      const result = await token(['--account', 'acme', '--days', days]);
      expect({ days, code: result.code, stdout: result.stdout, stderr: result.stderr }).toEqual({
        days,
        code: 2,
        stdout: '',
        stderr: `--days: a whole number of days from 1 to 3650, got ${days}\n`,
      });
    }
  });
});

describe('CLIs that need NATS, given a NATS_URL where no server answers', () => {
  let dataDir: string;
  let natsUrl: string;
  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'wagw-cli-nats-'));
    // A port just released by a listener: nothing answers there.
    natsUrl = `nats://127.0.0.1:${await freePort()}`;
  });
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

  const expectGaveUp = (result: Run): void => {
    expect({ code: result.code, stdout: result.stdout, stderr: result.stderr }).toEqual({
      code: 2,
      stdout: '',
      stderr: `NATS at ${natsUrl} did not answer (connection refused): is NATS_URL right?\n`,
    });
    // About 5 s of retries (a server that is just starting still counts), then it gives up.
    expect(result.ms).toBeGreaterThan(4_000);
    expect(result.ms).toBeLessThan(12_000);
  };

  it('npm run rebuild refuses a word it does not know (usage, exit 2) instead of only comparing where --write was meant', async () => {
    for (const [args, said] of [
      [['instance_states', '--wrte'], 'unknown option "--wrte"'],
      [['instance_states', 'write'], 'unexpected word "write"'],
    ] as const) {
      const result = await run('lib/dist/cli/rebuild.js', [...args], { NATS_URL: natsUrl, DATA_DIR: dataDir });
      expect({ args, code: result.code, stderr: result.stderr }).toEqual({
        args,
        code: 2,
        stderr: expect.stringMatching(new RegExp(`^${said}\\nusage:`)) as unknown,
      });
    }
  });

  it('npm run rebuild gives up after about 5 s with one line naming the URL, exit code 2', async () => {
    expectGaveUp(await run('lib/dist/cli/rebuild.js', ['instance_states'], { NATS_URL: natsUrl, DATA_DIR: dataDir }));
  }, 30_000);

  it('npm run token -- revoke refuses a malformed token id at once, before it connects (it waited 5 s and named NATS)', async () => {
    const result = await run('lib/dist/cli/token.js', ['revoke', 'ABC', '--account', 'acme'], { NATS_URL: natsUrl, DATA_DIR: dataDir });
    expect({ code: result.code, stdout: result.stdout, stderr: result.stderr }).toEqual({
      code: 2,
      stdout: '',
      stderr: 'token_id: the 32 hex characters printed when the token was issued\n',
    });
    expect(result.ms).toBeLessThan(3_000);
  });

  it('npm run token -- revoke gives up after about 5 s with one line naming the URL, exit code 2', async () => {
    expectGaveUp(
      await run('lib/dist/cli/token.js', ['revoke', '0123456789abcdef0123456789abcdef', '--account', 'acme'], { NATS_URL: natsUrl, DATA_DIR: dataDir }),
    );
  }, 30_000);
});

describe('npm run rebuild on a real nats-server', () => {
  let server: TestNats;
  let nats: NatsHandle;
  let checkpoints: CheckpointStore;
  let rebuilt: Checkpoint;
  const logger = testLogger();

  beforeAll(async () => {
    server = await startTestNats();
    nats = await connectNats({ url: server.url, name: 'rebuild-cli-test', logger });
    const store = await JetStreamEventStore.open(nats, { logger });
    checkpoints = await CheckpointStore.open(nats);
    const at = '2026-11-28T10:00:00.000Z';
    await store.append(instanceStream('REBUILD1'), [instanceEvent('InstanceCreated', at, { instance_id: 'REBUILD1', account: 'acme' })], {
      expectedVersion: 0,
      commandId: 'rebuild-1',
    });
    rebuilt = await rebuildInstanceStates(store, logger, await store.version('>'));
  });
  afterAll(async () => {
    await nats.close();
    await server.dispose();
  });

  const rebuild = (...args: string[]): Promise<Run> => run('lib/dist/cli/rebuild.js', ['instance_states', ...args], { NATS_URL: server.url });

  it('says a checkpoint of another model version cannot be used (exit 3, not "differs"), and --write makes it the rebuild', async () => {
    await checkpoints.replace({ ...rebuilt, modelVersion: rebuilt.modelVersion - 1 });
    const stale = await rebuild();
    expect([stale.code, stale.stdout]).toEqual([
      3,
      expect.stringContaining(`cannot be used: it was made by model version ${rebuilt.modelVersion - 1}; this release folds version ${rebuilt.modelVersion}`),
    ]);
    expect((await rebuild('--write')).code).toBe(0);
    const after = await rebuild();
    expect([after.code, after.stdout]).toEqual([0, expect.stringContaining('the rebuild equals the checkpoint')]);
  });

  it('says a checkpoint of another log cannot be used (exit 3), though its entries equal the rebuild (it said "equals")', async () => {
    await checkpoints.replace({ ...rebuilt, commandId: 'a-command-of-another-log' });
    const other = await rebuild();
    expect([other.code, other.stdout]).toEqual([3, expect.stringContaining('cannot be used: the log holds another commit at its position')]);
    expect((await rebuild('--write')).code).toBe(0);
    const after = await rebuild();
    expect([after.code, after.stdout]).toEqual([0, expect.stringContaining('the rebuild equals the checkpoint')]);
  });
});
