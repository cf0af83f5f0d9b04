import { Connection } from '@temporalio/client';
import proto from '@temporalio/proto';
import { allSearchAttributes } from '../contracts';

const { temporal } = proto;

/**
 * Registers our search attributes on the namespace where they are missing. The dev server registers them
 * only when it creates its database, so an existing `.data/temporal.db` needs this after an upgrade.
 */
export async function ensureSearchAttributes(address: string, namespace: string): Promise<string[]> {
  const connection = await Connection.connect({ address });
  try {
    const existing = await connection.operatorService.listSearchAttributes({ namespace });
    const known = new Set(Object.keys(existing.customAttributes ?? {}));
    const missing = allSearchAttributes.map((key) => key.name).filter((name) => !known.has(name));
    if (missing.length > 0) {
      const keyword = temporal.api.enums.v1.IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD;
      await connection.operatorService.addSearchAttributes({
        namespace,
        searchAttributes: Object.fromEntries(missing.map((name) => [name, keyword])),
      });
    }
    return missing;
  } finally {
    await connection.close();
  }
}
