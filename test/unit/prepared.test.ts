import { describe, expect, it } from 'vitest';
import type { Db } from '../../src/db/client';
import { preparedOnce, preparedWhileFewer } from '../../src/db/prepared';

describe('prepared statements per database handle', () => {
  it('builds each name once, and bounds only the shapes made from requests, not the fixed statements', () => {
    const db = {} as Db;
    let built = 0;
    const build = (name: string) => () => ({ name, at: ++built });
    // The fixed statements: as many as there are, none counting against the shapes' bound.
    for (const name of ['a', 'b', 'c']) preparedOnce(db, name, build(name));
    expect(preparedOnce(db, 'a', build('a'))).toEqual({ name: 'a', at: 1 });
    expect(preparedWhileFewer(db, 'page_1', 2, build('page_1'))).toEqual({ name: 'page_1', at: 4 });
    expect(preparedWhileFewer(db, 'page_2', 2, build('page_2'))).toEqual({ name: 'page_2', at: 5 });
    // The bound reached: a new shape is not prepared, one already prepared still is.
    expect(preparedWhileFewer(db, 'page_3', 2, build('page_3'))).toBeUndefined();
    expect(preparedWhileFewer(db, 'page_1', 2, build('page_1'))).toEqual({ name: 'page_1', at: 4 });
    // Another handle has its own.
    expect(preparedWhileFewer({} as Db, 'page_3', 2, build('page_3'))).toEqual({ name: 'page_3', at: 6 });
  });
});
