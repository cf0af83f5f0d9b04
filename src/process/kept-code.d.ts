/** See kept-code.js. */
export function codeHash(root: string, salt: string): Promise<string>;
export function safeToRun(
  path: string,
  kind: 'folder' | 'file',
  options?: { rootToo?: boolean },
): Promise<boolean>;
