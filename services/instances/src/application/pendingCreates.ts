/**
 * Instances this replica is creating (or created) that its directory does not show yet, by account. The directory is
 * fed from the log and lags each create by a moment, so a quota check against it alone let a burst through: 40
 * parallel creates against a quota of 5 made 40 (a bug hunt, on one replica). Each is counted until the directory
 * has it, or until its create failed. Creates racing on other replicas are not seen here (README: quotas).
 */
export class PendingCreates {
  private readonly byAccount = new Map<string, Set<string>>();

  /** `known`: whether the directory has the instance (from then on it counts it itself). */
  constructor(private readonly known: (instanceId: string) => boolean) {}

  /** The account's instances being created here and not in the directory yet. */
  count(account: string): number {
    const ids = this.byAccount.get(account);
    if (!ids) return 0;
    for (const id of ids) if (this.known(id)) ids.delete(id);
    if (ids.size === 0) this.byAccount.delete(account);
    return ids.size;
  }

  has(account: string, instanceId: string): boolean {
    return this.byAccount.get(account)?.has(instanceId) ?? false;
  }

  /** Counts the instance from now on (synchronously: the check and the count are one step); the answer un-counts it. */
  add(account: string, instanceId: string): () => void {
    let ids = this.byAccount.get(account);
    if (!ids) {
      ids = new Set();
      this.byAccount.set(account, ids);
    }
    ids.add(instanceId);
    return () => {
      ids.delete(instanceId);
      if (ids.size === 0 && this.byAccount.get(account) === ids) this.byAccount.delete(account);
    };
  }
}
