-- An approval's life is one transaction per transition (src/core/approvals.ts). The key a session
-- grant would store is worked out when the call is judged and kept with the request, so settling
-- "session" never parses the command again; a new message instead of a decision is 'superseded'.
alter table permission_requests add column grant_key jsonb;
alter table permission_requests drop constraint permission_requests_decision_check;
alter table permission_requests add constraint permission_requests_decision_check
  check (decision in ('once', 'session', 'deny', 'timeout', 'auto_deny', 'superseded'));
