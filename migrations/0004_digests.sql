-- Scheduled digests. `next_fire_at` is the earliest fire not yet handled: whoever moves it on (an
-- atomic update that names the old value) owns that fire, so a fire runs at most once however many
-- stewards share the database. `digest_runs` is the audit trail: one row per run or skipped fire.
alter table schedules add column next_fire_at timestamptz;
create index schedules_due on schedules (next_fire_at) where not paused;

create table digest_runs (
  id bigint generated always as identity primary key,
  -- No foreign key: the trail outlives a removed schedule.
  schedule_id text not null,
  fire_at timestamptz not null,
  trigger text not null check (trigger in ('schedule', 'manual')),
  outcome text not null check (outcome in ('running', 'posted', 'failed', 'skipped', 'interrupted')),
  session_id uuid references sessions (id),
  -- Replies delivered to the target room, and the ids of the posted messages where the channel
  -- reports them.
  posted integer not null default 0,
  message_ids jsonb not null default '[]',
  -- Why a run failed or a fire was skipped, in words the owner was told.
  detail text,
  started_at timestamptz not null,
  finished_at timestamptz
);
-- The second guard behind the lease: one scheduled run (or skip) per fire.
create unique index digest_runs_one_per_fire on digest_runs (schedule_id, fire_at) where trigger = 'schedule';
create index digest_runs_by_schedule on digest_runs (schedule_id, id);
