import { readFileSync } from 'node:fs';

/** Whether a process with this pid runs (signal 0 checks without sending anything). */
export const isAlive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

/** A running process's arguments as it was started (/proc/PID/cmdline), or null when it cannot be read. */
export const argvOf = (pid: number): string[] | null => {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').slice(0, -1);
  } catch {
    return null;
  }
};
