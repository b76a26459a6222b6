import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { acquireLauncherLock, LauncherRunning, LOCK_FILE, startTimeOf } from './lock';

/** A live process; with `asLauncher` its command line ends in launcher/main.js, as `npm start`'s does. */
const sleeper = async (asLauncher: boolean): Promise<ChildProcess> => {
  const child = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)', ...(asLauncher ? ['/repo/lib/dist/launcher/main.js'] : [])], { stdio: 'ignore' });
  await new Promise((resolve) => child.once('spawn', resolve));
  return child;
};

describe('the launcher lock on DATA_DIR', () => {
  let dataDir: string;
  const children: ChildProcess[] = [];
  const lockFile = (): string => join(dataDir, LOCK_FILE);
  const holder = (): number => Number(readFileSync(lockFile(), 'utf8').split(' ')[0]);

  beforeEach(() => {
    dataDir = mkdtempSync(join(tmpdir(), 'wagw-lock-'));
  });
  afterEach(() => {
    children.splice(0).forEach((child) => child.kill('SIGKILL'));
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('is taken when no launcher holds it', () => {
    acquireLauncherLock(dataDir);
    expect(holder()).toBe(process.pid);
  });

  it('refuses while another launcher holds it, naming its pid', async () => {
    const other = await sleeper(true);
    children.push(other);
    writeFileSync(lockFile(), `${other.pid} ${startTimeOf(other.pid!)}\n`);
    expect(() => acquireLauncherLock(dataDir)).toThrow(LauncherRunning);
    expect(() => acquireLauncherLock(dataDir)).toThrow(`Another npm start (pid ${other.pid}) is running on ${dataDir}`);
    expect(holder()).toBe(other.pid);
  });

  it('takes over the lock of a launcher that is gone (SIGKILLed, so it could not remove it)', async () => {
    const gone = await sleeper(true);
    const start = startTimeOf(gone.pid!);
    gone.kill('SIGKILL');
    await new Promise((resolve) => gone.once('exit', resolve));
    writeFileSync(lockFile(), `${gone.pid} ${start}\n`);
    acquireLauncherLock(dataDir);
    expect(holder()).toBe(process.pid);
  });

  it('takes over a lock whose pid now belongs to another program, or to a later process', async () => {
    const notLauncher = await sleeper(false);
    const launcher = await sleeper(true);
    children.push(notLauncher, launcher);
    for (const stale of [`${notLauncher.pid} ${startTimeOf(notLauncher.pid!)}`, `${launcher.pid} 1`, 'not a pid']) {
      writeFileSync(lockFile(), `${stale}\n`);
      acquireLauncherLock(dataDir);
      expect(holder()).toBe(process.pid);
    }
  });
});
