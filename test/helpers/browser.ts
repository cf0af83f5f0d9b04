import { createServer, type Server } from 'node:http';
import { PaymentsClient } from '../../src/client/index';
import type { MerchantCredentials } from '../../src/merchants/accounts';
import { chromium, type Browser } from 'playwright-core';
import { startTestEnv, type TestEnv } from './env';
import { freePort } from '../../src/dev/postgres';

/** Debian's Chromium, headless, with nothing reaching out to the network on its own. */
export async function launchBrowser(): Promise<Browser> {
  return chromium.launch({
    executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--no-first-run',
    ],
  });
}

/** The whole service listening on a loopback port (hosted-page links point at it) and a browser. */
export async function startServedEnv(): Promise<{ env: TestEnv; browser: Browser; close(): Promise<void> }> {
  const port = await freePort();
  const env = await startTestEnv({ BASE_URL: `http://127.0.0.1:${port}`, PORT: String(port) });
  await env.app.listen({ host: '127.0.0.1', port });
  const browser = await launchBrowser();
  return {
    env,
    browser,
    async close() {
      await browser.close();
      await env.close();
    },
  };
}

/** The merchant's own site, where customers land after a hosted page. */
export async function startShop(): Promise<{ url: string; close(): void }> {
  const shop: Server = createServer((request, response) => {
    response.setHeader('content-type', 'text/html');
    response.end(
      `<h1>Back at the shop</h1><p id="query">${new URL(request.url ?? '/', 'http://x').search}</p>`,
    );
  });
  await new Promise<void>((resolve) => shop.listen(0, '127.0.0.1', resolve));
  const address = shop.address();
  return {
    url: `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}/return`,
    close: () => shop.close(),
  };
}

/** The typed client a merchant would use, over real HTTP to the served environment, with test keys. */
export function typedClient(env: TestEnv, credentials: MerchantCredentials): PaymentsClient {
  return new PaymentsClient({
    baseUrl: env.config.baseUrl,
    secretKey: credentials.test_secret_key,
    encryptionKey: credentials.encryption_key,
  });
}
