-- A digest run names the turn that makes its post, so a turn a restart cut off and recovery
-- resumed settles its run (posted, or failed) from the delivery ledger instead of leaving it
-- "running" for the watchdog to call stuck.
alter table digest_runs add column turn_id uuid;
create index digest_runs_unsettled on digest_runs (turn_id)
  where turn_id is not null and outcome in ('running', 'interrupted');
