import pino, { type LoggerOptions } from 'pino';

/** Paths never written to logs: credentials, encrypted bodies and card data wherever they appear. */
export const redactPaths = [
  'req.headers.authorization',
  'headers.authorization',
  'authorization',
  'payload',
  '*.payload',
  'body',
  '*.body',
  'card_number',
  '*.card_number',
  'card_cvv',
  '*.card_cvv',
  'cvv',
  '*.cvv',
  'pan',
  '*.pan',
  'secret',
  '*.secret',
  'encryption_key',
  '*.encryption_key',
];

export function loggerOptions(level: string): LoggerOptions {
  return {
    level,
    redact: { paths: redactPaths, censor: '[redacted]' },
    base: { service: 'payments' },
    timestamp: pino.stdTimeFunctions.isoTime,
  };
}

export function createLogger(level: string) {
  return pino(loggerOptions(level));
}

export type Logger = pino.Logger;
