-- A turn reads the log from the newest compaction on (SessionLog.recent): find it without a scan.
create index session_events_compactions on session_events (session_id, id) where kind = 'compaction';

-- A call id is unique within what a turn reads (turn-state.ts uniqueCallIds), no longer within the
-- whole session, so a question is one per call of its turn.
drop index permission_requests_one_per_call;
create unique index permission_requests_one_per_call on permission_requests (session_id, turn_id, call_id);
