-- steward's first schema. Every table the design names is shaped here, so later features fill
-- columns rather than reshape the model. Runs unchanged on PostgreSQL and on embedded PGlite.

-- One open session per (channel, room); /new closes it and opens the next.
create table sessions (
  id uuid primary key,
  channel text not null,
  room text not null,
  -- A route the session is pinned to (sensitive sessions stay on a local model); null = default.
  pinned_route text,
  title text,
  created_at timestamptz not null default now(),
  ended_at timestamptz
);
create unique index sessions_one_open_per_room on sessions (channel, room) where ended_at is null;

-- The source of truth for a conversation. Written before anything is acted on; never changed.
create table session_events (
  id bigint generated always as identity primary key,
  session_id uuid not null references sessions (id),
  turn_id uuid,
  kind text not null,
  payload jsonb not null,
  created_at timestamptz not null default now()
);
create index session_events_by_session on session_events (session_id, id);

create function session_events_are_append_only() returns trigger language plpgsql as $$
begin
  raise exception 'session_events is append-only: % refused', tg_op;
end
$$;
create trigger session_events_append_only
  before update or delete on session_events
  for each row execute function session_events_are_append_only();
create trigger session_events_no_truncate
  before truncate on session_events
  for each statement execute function session_events_are_append_only();

-- One row per model call.
create table usage (
  id bigint generated always as identity primary key,
  session_id uuid references sessions (id),
  route text not null,
  provider text not null,
  model text not null,
  tokens_in integer not null default 0,
  tokens_out integer not null default 0,
  cost_usd numeric(14, 6),
  latency_ms integer not null,
  outcome text not null,
  created_at timestamptz not null default now()
);
create index usage_by_time on usage (created_at);
create index usage_by_session on usage (session_id);

-- One row per tool call. Arguments are kept only as a digest: no secrets in audit rows.
create table audit_log (
  id bigint generated always as identity primary key,
  session_id uuid references sessions (id),
  turn_id uuid,
  call_id text not null,
  tool text not null,
  args_digest text not null,
  layer text not null,
  verdict text not null check (verdict in ('allow', 'ask', 'deny')),
  score integer,
  decision text check (decision in ('once', 'session', 'deny', 'timeout', 'auto_deny')),
  outcome text,
  duration_ms integer,
  created_at timestamptz not null default now()
);
create index audit_log_by_time on audit_log (created_at);

-- Large tool results, stored in chunks so a 100 MB output never becomes one string in memory.
create table tool_outputs (
  ref uuid primary key,
  session_id uuid references sessions (id),
  tool text not null,
  trusted boolean not null default false,
  bytes bigint not null default 0,
  lines bigint not null default 0,
  complete boolean not null default false,
  created_at timestamptz not null default now(),
  expires_at timestamptz not null
);
create index tool_outputs_by_expiry on tool_outputs (expires_at);
create table tool_output_chunks (
  ref uuid not null references tool_outputs (ref) on delete cascade,
  seq integer not null,
  body text not null,
  primary key (ref, seq)
);

-- "Allow for this session": narrow (a tool, and for shell a program and subcommand), time-boxed.
create table session_grants (
  id uuid primary key,
  session_id uuid not null references sessions (id),
  tool text not null,
  program text,
  subcommand text,
  max_score integer not null check (max_score between 0 and 2),
  created_at timestamptz not null default now(),
  expires_at timestamptz not null,
  revoked_at timestamptz
);
create index session_grants_live on session_grants (session_id, tool) where revoked_at is null;

-- A question to the owner. What runs after approval is exactly `canonical`, as shown.
create table permission_requests (
  id uuid primary key,
  session_id uuid not null references sessions (id),
  turn_id uuid not null,
  call_id text not null,
  tool text not null,
  args jsonb not null,
  canonical text not null,
  score integer not null,
  layer text not null,
  rationale text not null,
  status text not null default 'pending' check (status in ('pending', 'approved', 'denied', 'expired')),
  decision text check (decision in ('once', 'session', 'deny', 'timeout', 'auto_deny')),
  decided_by text,
  created_at timestamptz not null default now(),
  decided_at timestamptz,
  expires_at timestamptz not null
);
create unique index permission_requests_one_per_call on permission_requests (session_id, call_id);
create index permission_requests_pending on permission_requests (status) where status = 'pending';

-- Digests that post themselves.
create table schedules (
  id text primary key,
  cron text not null,
  timezone text not null,
  target_channel text not null,
  target_room text not null,
  prompt text not null,
  skill text,
  paused boolean not null default false,
  source text not null default 'chat' check (source in ('chat', 'config')),
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  last_fired_at timestamptz
);
