-- A session grant means what the owner saw: for a network program the host (or git remote) it
-- reached, for a program no rule knows the exact arguments. `target` holds that; null means the
-- program and subcommand are the whole scope.
alter table session_grants add column target text;
