// A few error classes, each named for where it failed. Their messages are one line meant for the
// operator: what went wrong and how to fix it, never a stack trace and never a secret.

/** The configuration file or environment is wrong. Exit status 2. */
export class ConfigError extends Error {
  override name = 'ConfigError';
}

/** The command line is wrong. Exit status 2, with usage. */
export class UsageError extends Error {
  override name = 'UsageError';
}

/** The database could not be opened, migrated or written. Exit status 1. */
export class StoreError extends Error {
  override name = 'StoreError';
}

export function exitCodeFor(error: unknown): number {
  return error instanceof ConfigError || error instanceof UsageError ? 2 : 1;
}
