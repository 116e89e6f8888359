import { HEAD_CHARS, type SealedValueStore } from '../sealed-values.ts';
import { createPool, withTransaction } from './pool.ts';

const asText = (v: string | Buffer) => (typeof v === 'string' ? v : v.toString('latin1'));

export function openPostgresSealedValues(url: string): SealedValueStore {
  const pool = createPool(url, { max: 2, applicationName: 'emr-bridge data-keys' });
  return {
    async heads(c, after, limit) {
      const head = c.bytes ? `substring(${c.column} from 1 for ${HEAD_CHARS})` : `left(${c.column}, ${HEAD_CHARS})`;
      const { rows } = await pool.query<{ key: string; head: string | Buffer }>(
        `SELECT ${c.key} AS key, ${head} AS head FROM ${c.table} WHERE ${c.column} IS NOT NULL AND ${c.key} > $1 ORDER BY ${c.key} LIMIT $2`,
        [after, limit],
      );
      return rows.map((r) => ({ key: r.key, head: asText(r.head) }));
    },
    async value(c, key) {
      const { rows } = await pool.query<{ value: string | Buffer | null }>(`SELECT ${c.column} AS value FROM ${c.table} WHERE ${c.key} = $1`, [key]);
      return rows[0]?.value ?? null;
    },
    replace: (c, replacements) =>
      withTransaction(pool, async (client) => {
        let written = 0;
        for (const r of replacements) {
          const res = await client.query(`UPDATE ${c.table} SET ${c.column} = $1 WHERE ${c.key} = $2 AND ${c.column} = $3`, [r.next, r.key, r.previous]);
          written += res.rowCount ?? 0;
        }
        return written;
      }),
    async count(c) {
      const { rows } = await pool.query<{ n: string }>(`SELECT count(*) AS n FROM ${c.table} WHERE ${c.column} IS NOT NULL`);
      return Number(rows[0]!.n);
    },
    close: () => pool.end(),
  };
}
