-- The Matrix channel's own state, in the database rather than in files, so it is backed up with
-- everything else and a restart resumes exactly where the last sync stopped.

-- Small values kept per bot account: the sync token, the client's key/value pairs, the direct room.
create table matrix_state (
  account text not null,
  key text not null,
  value text not null,
  updated_at timestamptz not null default now(),
  primary key (account, key)
);

-- Events already taken in, so an event delivered again (a sync batch retried after a failure or a
-- crash) is acted on once. Rows older than a week are removed at start.
create table matrix_seen_events (
  account text not null,
  event_id text not null,
  seen_at timestamptz not null default now(),
  primary key (account, event_id)
);

-- Permission prompts posted as messages: a reaction or a reply (also after a restart) finds its
-- question here, and the prompt is edited to show the outcome. `outcome` is set once.
create table matrix_prompts (
  account text not null,
  event_id text not null,
  request_id text not null,
  prompt_room text not null,
  turn_room text not null,
  body text not null,
  html text not null,
  outcome text,
  created_at timestamptz not null default now(),
  primary key (account, event_id)
);
create index matrix_prompts_by_request on matrix_prompts (request_id);
