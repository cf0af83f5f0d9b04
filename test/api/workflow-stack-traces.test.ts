import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestEnv, type TestEnv } from '../helpers/env';
import { cardRequest, merchantClient } from '../helpers/merchant-client';

/**
 * The Temporal UI's Stack Trace tab (the `__stack_trace` query) of a card payment waiting on its 3-D Secure
 * challenge: no frames by default, where the SDK captured none for any of the workflow's promises
 * (workflows/no-stack-traces.ts), and naming the workflow's own source with `WORKFLOW_STACK_TRACES=true`.
 */
async function stackTraceOfAWaitingPayment(env: TestEnv): Promise<string> {
  const merchant = merchantClient(env.app, await env.createMerchant());
  const response = await merchant.post('/api/v1/test/card', cardRequest({ card_number: '4111111111111111' }));
  expect(response.statusCode, response.body).toBe(200);
  const created = response.json() as { status: string; data: { transaction_id: string } };
  expect(created.status).toBe('REDIRECT');
  return env.client.workflow.getHandle(created.data.transaction_id).query<string>('__stack_trace');
}

describe('workflow stack traces', () => {
  describe('by default', () => {
    let env: TestEnv;
    beforeAll(async () => {
      env = await startTestEnv();
    });
    afterAll(() => env?.close());

    it('captures no frame for a waiting workflow', async () => {
      const trace = await stackTraceOfAWaitingPayment(env);
      expect(trace).not.toMatch(/\bat\b/);
      expect(trace).not.toContain('card-payment');
    });
  });

  describe('with WORKFLOW_STACK_TRACES=true', () => {
    let env: TestEnv;
    beforeAll(async () => {
      env = await startTestEnv({ WORKFLOW_STACK_TRACES: 'true' });
    }, 60_000);
    afterAll(() => env?.close());

    it('shows where the workflow waits, in its own source', async () => {
      const trace = await stackTraceOfAWaitingPayment(env);
      expect(trace).toMatch(/workflows\/\S+\.ts:\d+/);
    });
  });
});
