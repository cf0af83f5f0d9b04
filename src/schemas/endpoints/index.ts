/**
 * Every endpoint of the merchant API, declared once beside its resource: method, path, what it takes
 * (../requests.ts) and answers (../answers.ts), how the reference documents it, and what the API installs
 * on it (its key and envelope, src/api/app.ts). A route (src/api/routes) adds only its handler.
 */
export type { Endpoint, Reference } from './declare';
export * from './aftercare';
export * from './cards';
export * from './crypto';
export * from './links';
export * from './transactions';
export * from './payouts';
export * from './wallets';
export * from './webhooks';
export * from './service';
