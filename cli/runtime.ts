import { type Config, loadConfig } from '../src/config/load.ts';
import { createLogger, type Logger } from '../src/log.ts';
import type { Db } from '../src/store/db.ts';
import { migrate } from '../src/store/migrate.ts';
import { openDb } from '../src/store/open-db.ts';
import type { CliIo } from './io.ts';

export interface Runtime {
  config: Config;
  log: Logger;
}

/** `quiet`: an interactive command, where the owner sees notices directly; log only errors unless asked. */
export function loadRuntime(io: CliIo, quiet = false): Runtime {
  const config = loadConfig(io.env, io.cwd);
  const level = quiet && !io.env.STEWARD_LOG_LEVEL ? 'error' : config.logLevel;
  return { config, log: createLogger(level, config.secrets) };
}

/** Opens the configured database and brings its schema up to date; refuses a newer schema. */
export async function openStore({ config, log }: Runtime): Promise<Db> {
  const db = await openDb({ ...config, warn: (line) => log.warn(line) });
  try {
    const applied = await migrate(db);
    for (const m of applied) log.info({ migration: m.name }, 'applied migration');
  } catch (error) {
    await db.close();
    throw error;
  }
  return db;
}
