import { existsSync, linkSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { argvOf, isAlive } from '../ops/processes';

/**
 * One launcher per DATA_DIR. A second one would take the first one's nats-server for an orphan and stop it (the
 * store is DATA_DIR's), leaving the first gateway unable to answer. The lock is DATA_DIR/launcher.pid, holding the
 * launcher's pid and start time; it counts only while that very process (not a later one given the same pid) runs
 * and is a launcher, so the lock of a launcher killed with SIGKILL is simply taken over.
 */
export const LOCK_FILE = 'launcher.pid';

/** Another launcher holds DATA_DIR. */
export class LauncherRunning extends Error {
  constructor(
    readonly pid: number,
    readonly dataDir: string,
  ) {
    super(`Another npm start (pid ${pid}) is running on ${dataDir}: stop it first (Ctrl-C there), or give this one its own DATA_DIR and PORT`);
  }
}

const HAS_PROC = existsSync('/proc/self/stat');

/** The process's start time in clock ticks since boot (/proc/PID/stat field 22): with the pid, it names one process. */
export const startTimeOf = (pid: number): string | null => {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name (which may hold spaces and parentheses): field 3 is at index 0.
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19] ?? null;
  } catch {
    return null;
  }
};

const isLauncher = (pid: number): boolean => (argvOf(pid) ?? []).some((arg) => /launcher[\\/]main\.[jt]s$/.test(arg));

const describeSelf = (): string => `${process.pid} ${startTimeOf(process.pid) ?? ''}`.trim();

/** The pid of the launcher holding `file`, or null when the file is absent, unreadable or stale. */
const holderOf = (file: string): number | null => {
  let pid: number;
  let started: string | undefined;
  try {
    const [pidText, startText] = readFileSync(file, 'utf8').trim().split(' ');
    pid = Number(pidText);
    started = startText;
  } catch {
    return null;
  }
  // Our own pid: a lock left by an earlier process that had it (a container restarted, its launcher pid 1 again).
  if (!Number.isSafeInteger(pid) || pid < 1 || pid === process.pid) return null;
  // Without /proc (not Linux) a live pid is all that can be checked.
  if (!HAS_PROC) return isAlive(pid) ? pid : null;
  return startTimeOf(pid) === started && isLauncher(pid) ? pid : null;
};

/**
 * Takes DATA_DIR's lock, or throws `LauncherRunning`. The file appears with its content at once (written aside, then
 * hard-linked into place, which fails if it exists), so another launcher never reads it half-written. Two launchers
 * taking over the same stale lock within the same few milliseconds are not told apart; two people starting the
 * quickstart on one directory at that very instant are not a case it defends. The lock is released on exit.
 */
export const acquireLauncherLock = (dataDir: string): void => {
  const file = join(dataDir, LOCK_FILE);
  const aside = `${file}.${process.pid}`;
  writeFileSync(aside, `${describeSelf()}\n`);
  try {
    for (let attempt = 0; attempt < 3; attempt++) {
      try {
        linkSync(aside, file);
        process.once('exit', () => {
          // Only our own: after a takeover (we were thought gone) the file is the next launcher's.
          try {
            if (readFileSync(file, 'utf8').trim() === describeSelf()) rmSync(file, { force: true });
          } catch {
            // Already gone.
          }
        });
        return;
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      }
      const holder = holderOf(file);
      if (holder !== null) throw new LauncherRunning(holder, dataDir);
      rmSync(file, { force: true });
    }
    throw new Error(`cannot take ${file}: it keeps reappearing`);
  } finally {
    rmSync(aside, { force: true });
  }
};
