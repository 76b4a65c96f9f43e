// Runs SQL statements (one per argument, in order) in an in-memory DuckDB: the tests use it as an
// independent Parquet writer (COPY ... TO 'file.parquet'). Prints nothing; fails on the first error.
import { DuckDBInstance } from '@duckdb/node-api';

const db = await DuckDBInstance.create(':memory:');
const connection = await db.connect();
try {
  for (const sql of process.argv.slice(2)) {
    await connection.run(sql);
  }
} finally {
  connection.closeSync();
}
