import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The checkout's own folder (where package.json, migrations/ and workflows/ are). Files the service reads at
 * run time are named from here, not from the importing module: the service also runs from one bundled file
 * (bin/bundled.js), which stands elsewhere and puts this folder's path here when it bundles.
 */
export const root = fileURLToPath(new URL('../..', import.meta.url));

/** A path inside the checkout, given relative to its root. */
export const fromRoot = (...parts: string[]): string => join(root, ...parts);
