import { readdirSync, readFileSync } from 'node:fs';

/** The fields of /proc/PID/stat after the command name (which may hold spaces and parentheses): index 0 is field 3. */
const statFields = (pid: number | string): string[] => {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
};

/** Whether `pid` runs: a zombie (exited, not yet reaped by its parent) does not count. */
export const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return statFields(pid)[0] !== 'Z';
  } catch {
    return false;
  }
};

/** Its process group id (field 5 of /proc/PID/stat). */
export const processGroupOf = (pid: number): number => Number(statFields(pid)[2]);

/** The pids and command lines of `ppid`'s children, from /proc. */
export const childrenOf = (ppid: number): Array<{ pid: number; cmdline: string }> =>
  readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry))
    .flatMap((entry) => {
      try {
        if (Number(statFields(entry)[1]) !== ppid) return [];
        return [{ pid: Number(entry), cmdline: readFileSync(`/proc/${entry}/cmdline`, 'utf8').replace(/\0/g, ' ') }];
      } catch {
        return [];
      }
    });
