import { randomBytes } from 'node:crypto';
import { WorkflowNotFoundError, WorkflowUpdateFailedError, type Client } from '@temporalio/client';
import type { Db } from '../db/client';
import { findCryptoAsset } from '../catalogue';
import { depositUpdate } from '../temporal/contracts';
import { parseUnits } from '../units';
import type { TransactionRow } from './view';

export type DepositOutcome = 'accepted' | 'not-accepting' | { invalid: string };

/** The asset a crypto transaction is paid in. */
export function assetOf(row: TransactionRow): { code: string; network: string } | undefined {
  const d = row.details as Record<string, string | undefined>;
  const code = row.kind === 'ramp' ? d.crypto : d.crypto_currency;
  const network = d.crypto_network;
  const takesDeposits =
    row.kind === 'crypto_payin' || (row.kind === 'ramp' && d.transaction_type === 'OFFRAMP');
  return takesDeposits && code && network ? { code, network } : undefined;
}

/** Simulates a deposit on the sandbox chain: the amount reaches the transaction's workflow as an update. */
export async function submitDeposit(
  db: Db,
  temporal: Client,
  row: TransactionRow,
  amount: string,
  txHash: string = `0x${randomBytes(32).toString('hex')}`,
): Promise<DepositOutcome> {
  const asset = assetOf(row);
  if (!asset) return 'not-accepting';
  const found = await findCryptoAsset(db, asset.code, asset.network);
  const units = found ? parseUnits(amount, found.decimals) : undefined;
  if (!found || units === undefined)
    return { invalid: `The amount field must have at most ${found?.decimals ?? 0} decimal places.` };
  try {
    await temporal.workflow
      .getHandle(row.id)
      .executeUpdate(depositUpdate, { args: [{ txHash, units: units.toString() }] });
    return 'accepted';
  } catch (error) {
    if (error instanceof WorkflowUpdateFailedError || error instanceof WorkflowNotFoundError)
      return 'not-accepting';
    throw error;
  }
}
