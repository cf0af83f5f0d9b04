import type { Client } from '@temporalio/client';
import type { Db } from '../db/client';
import { APM_CONNECTOR_METHODS, APM_METHODS, apmMethodUpdate, type ApmMethod } from '../contracts';
import { sendUpdate } from '../temporal/client';
import { activeTerminals } from '../merchants/terminals';
import { findTransaction } from './lookup';
import { detailsOf, type TransactionRow } from './view';

/** Waiting on the methods page: sent there, and no method picked yet. */
export function awaitsApmMethod(row: TransactionRow): boolean {
  return row.status === 'REDIRECT' && detailsOf({ ...row, kind: 'apm' }).payment_method === undefined;
}

/** The methods the merchant's active APM terminals of the payment's mode take, in the page's order. */
export async function offeredApmMethods(db: Db, row: TransactionRow): Promise<ApmMethod[]> {
  const terminals = await activeTerminals(db, row, 'apm');
  const taken = new Set(terminals.flatMap((terminal) => APM_CONNECTOR_METHODS[terminal.connector] ?? []));
  return APM_METHODS.filter((method) => taken.has(method));
}

/**
 * The method the customer picked: told to the workflow (which routes it to a terminal whose provider
 * takes it and answers once the provider's page is projected) while the payment still waits on one; a
 * second pick changes nothing. Answers the payment as it then stands.
 */
export async function chooseApmMethod(
  deps: { db: Db; temporal: Client },
  row: TransactionRow,
  method: ApmMethod,
): Promise<TransactionRow> {
  if (awaitsApmMethod(row)) await sendUpdate(deps.temporal, row.id, apmMethodUpdate, { method }, row.runId);
  return (await findTransaction(deps.db, row.id)) ?? row;
}
