import { fileURLToPath } from 'node:url';

/**
 * The payload key the recorded histories are encrypted with. A test fixture, not a secret: it protects
 * nothing but sandbox test data, and the replay test needs it to read the histories.
 */
export const REPLAY_PAYLOAD_KEYS = 'replay1:1dab3ee450ea90494bccf90731f7297d042a418104c1a51a7fc793189ad63673';

export const historiesDir = fileURLToPath(new URL('./histories', import.meta.url));
