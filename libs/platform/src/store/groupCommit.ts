/** One SQL statement with its parameters, for `Db.batch`. */
export interface Statement { sql: string; params?: unknown[] }

/**
 * Group commit: batches that arrive while a commit runs are written together in the next transaction, so a
 * process under load commits once for many callers instead of once each. `runGroup` writes a group atomically
 * and answers, per batch, null or the error that batch alone met (a batch whose statement fails is rolled back
 * alone: see `runGroupInTx`). Every caller is answered after the commit that holds its batch.
 */
export function groupCommitter(runGroup: (group: Statement[][]) => Promise<(Error | null)[]>, opts: { concurrency: number; maxGroup: number }) {
  const queue: { statements: Statement[]; resolve(): void; reject(e: Error): void }[] = [];
  let running = 0;
  const flush = async () => {
    while (queue.length) {
      const group = queue.splice(0, opts.maxGroup);
      let errors: (Error | null)[];
      try { errors = await runGroup(group.map((b) => b.statements)); } catch (e) { errors = group.map(() => e as Error); }
      group.forEach((b, i) => (errors[i] ? b.reject(errors[i]!) : b.resolve()));
    }
    running--;
  };
  return (statements: Statement[]) => new Promise<void>((resolve, reject) => {
    queue.push({ statements, resolve, reject });
    if (running < opts.concurrency) { running++; setImmediate(flush); }
  });
}

/**
 * A group as one atomic script (`atomically` runs statements in one transaction); if any statement fails, the
 * whole script rolls back and each batch runs again on its own, so one bad batch fails alone (the rare path
 * costs more).
 */
export async function runGroupAtomically(atomically: (statements: Statement[]) => Promise<void>, group: Statement[][]): Promise<(Error | null)[]> {
  try { await atomically(group.flat()); return group.map(() => null); } catch (e) {
    if (group.length === 1) return [e as Error];
  }
  const out: (Error | null)[] = [];
  for (const b of group) { try { await atomically(b); out.push(null); } catch (e) { out.push(e as Error); } }
  return out;
}
