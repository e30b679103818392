-- Spend caps and the digest watchdog. A budget notice is one row per period, cap and level, so
-- each of 50/80/100% is said once however many calls cross it; an override raises today's daily
-- cap (`/budget daily N`). A digest run records when it was delivered and when the owner was told
-- it was not, so a fire that failed, was skipped, got stuck or was never delivered is reported once.
create table budget_notices (
  period text not null,
  cap text not null check (cap in ('daily', 'monthly')),
  level integer not null check (level in (50, 80, 100)),
  created_at timestamptz not null default now(),
  primary key (period, cap, level)
);

create table budget_overrides (
  day date primary key,
  daily_usd numeric not null check (daily_usd > 0),
  created_at timestamptz not null default now()
);

alter table digest_runs add column delivered_at timestamptz;
alter table digest_runs add column notified_at timestamptz;
create index digest_runs_unreported on digest_runs (fire_at) where delivered_at is null and notified_at is null;
