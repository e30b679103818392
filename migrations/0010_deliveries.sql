-- The delivery ledger: one row per outbound final reply and digest post, with the platform's
-- message ids or the reason it did not arrive, so "was it delivered?" is a query (a digest post
-- joins its run through session_id). A final reply that failed is posted to the owner once the
-- channel is back (`reported_at`), never dropped.
create table deliveries (
  id bigint generated always as identity primary key,
  kind text not null check (kind in ('reply', 'digest', 'late_reply')),
  channel text not null,
  room text not null,
  session_id uuid references sessions (id),
  turn_id uuid,
  status text not null check (status in ('delivered', 'failed')),
  message_ids jsonb not null default '[]',
  error text,
  -- A failed final reply keeps its text, so it can be posted once the channel is back.
  body text,
  reported_at timestamptz,
  -- Posting it late failed this many times; past Limits.lateReplyTries it is only logged.
  report_attempts integer not null default 0,
  created_at timestamptz not null default now()
);
create index deliveries_by_turn on deliveries (turn_id);
create index deliveries_unreported on deliveries (channel, id)
  where status = 'failed' and kind = 'reply' and reported_at is null;
