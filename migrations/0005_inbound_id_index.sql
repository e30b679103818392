-- Every inbound message is checked against the room's earlier ones by its platform id (a message
-- delivered again after a restart is not answered twice); this keeps that check off a full scan.
create index session_events_inbound_id on session_events ((payload->>'inboundId')) where kind = 'user_message';
