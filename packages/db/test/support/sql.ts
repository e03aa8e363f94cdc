import pg from "pg";

/** Runs SQL (several statements allowed) with the given schema first on the search_path. */
export async function runSql(connectionString: string, schema: string, sql: string): Promise<void> {
  const client = new pg.Client({ connectionString });
  await client.connect();
  try {
    await client.query(`CREATE SCHEMA IF NOT EXISTS "${schema}"`);
    await client.query(`SET search_path TO "${schema}"`);
    await client.query(sql);
  } finally {
    await client.end();
  }
}

export async function queryRows<T extends pg.QueryResultRow>(
  connectionString: string,
  sql: string,
  params: unknown[] = [],
): Promise<T[]> {
  const client = new pg.Client({ connectionString });
  await client.connect();
  try {
    return (await client.query<T>(sql, params)).rows;
  } finally {
    await client.end();
  }
}
