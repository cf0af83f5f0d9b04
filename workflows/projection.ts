import { workflowInfo } from '@temporalio/workflow';
import type { FirstAnswer } from '../src/contracts';
import { store } from './activities';

/** What a move or a record adds to the projection besides the status. */
export interface Placement {
  terminalId?: string;
  acquirerReference?: string;
  descriptor?: string | null;
  redirectUrl?: string | null;
  details?: Record<string, unknown>;
  refunded?: boolean;
  /** An ops action this write applies, recorded in the same database transaction. */
  audit?: { reason: string; actor: string; action: string; key: string; statusBefore: string };
  /** Removes the vaulted card number and CVV in the write's own statement. */
  purgeCard?: boolean;
}

/**
 * The transaction's projection to Postgres, written from its workflow: one write after another, each
 * with a version that grows with the workflow's history. What is told (the first answer, a hosted step's
 * answer) is only ever a state already written; callers read the rest from the row.
 */
export class Projection {
  /** The state as projected: what may be told. */
  private projected: FirstAnswer = { status: 'PENDING', message: 'Transaction is being processed.' };
  private versionBase = 0;
  private versionStep = 0;
  private writes: Promise<void> = Promise.resolve();
  /** The final state another run wrote, once taken: no write of this run's replaces what may be told. */
  private adopted = false;

  constructor(private readonly transactionId: string) {}

  get state(): FirstAnswer {
    return this.projected;
  }

  /** Takes the state the row already holds (final, written by the run a Reset replaced), writing nothing. */
  adopt(state: FirstAnswer): void {
    this.projected = state;
    this.adopted = true;
  }

  /**
   * Queues one write (of `next`, or of the current state with new details); each takes its version when
   * its turn comes, so a detail recorded while a move is being written never lands with an older status.
   */
  write(next: FirstAnswer | undefined, placement: Placement): Promise<void> {
    const write = this.writes.then(async () => {
      const state = next ?? this.projected;
      await store.project({
        transactionId: this.transactionId,
        version: this.nextVersion(),
        ...state,
        ...placement,
      });
      // A write under way when the run adopted another run's end does not take it back.
      if (!this.adopted) this.projected = state;
    });
    this.writes = write.catch(() => undefined);
    return write;
  }

  /**
   * A workflow task the server refused (an update arrived while it ran) may have written projections
   * already; its retry sees a longer history, so every write of the retry supersedes them, whichever path
   * it takes.
   */
  private nextVersion(): number {
    const { historyLength } = workflowInfo();
    if (historyLength !== this.versionBase) {
      this.versionBase = historyLength;
      this.versionStep = 0;
    }
    this.versionStep += 1;
    return this.versionBase * 1000 + this.versionStep;
  }
}
