// A database of its own for each scenario, on the suite's private PostgreSQL cluster.
import pg from 'pg';

let n = 0;
export async function freshDatabase(adminUrl: string): Promise<string> {
  const name = `faults_${process.pid}_${n++}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`create database ${name}`);
  await admin.end();
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return url.toString();
}

export async function query<T>(url: string, sql: string): Promise<T[]> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    return (await c.query(sql)).rows as T[];
  } finally {
    await c.end();
  }
}
