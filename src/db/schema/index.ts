export * from './merchants';
export * from './wallets';
export * from './catalogue';
export * from './transactions';
export * from './webhooks';
export * from './rate-limits';
export * from './crypto';
export * from './sandbox';
