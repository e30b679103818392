-- The Matrix channel's end-to-end encryption store: the bot's device id and a snapshot of the
-- crypto's whole IndexedDB (its Olm account, Olm and Megolm sessions, tracked devices), saved after
-- every write that changed it. In the database next to the sync token, so a backup restores a
-- consistent pair. `holder` is the process that owns the store now: starting takes it over, and a
-- write by any other process is refused, so two stewards on one account never overwrite each
-- other's keys.
create table matrix_crypto_store (
  account text primary key,
  device_id text,
  holder text not null,
  snapshot bytea,
  snapshot_bytes integer not null default 0,
  updated_at timestamptz not null default now()
);
