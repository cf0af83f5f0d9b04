import type { FastifyReply } from 'fastify';
import type { Created } from '../transactions/create';
import type { TransactionBody } from '../transactions/view';

/** A create's answer: the transaction body, marked when it replays an earlier request with the same order id. */
export function replyCreated(reply: FastifyReply, created: Created): TransactionBody {
  if (created.replayed) void reply.header('idempotent-replayed', 'true');
  return created.body;
}
