-- Whether a turn is open is asked for one turn at a time (SessionLog.isOpen, openTurns): by its id.
create index session_events_turn_frames on session_events (turn_id) where kind in ('user_message', 'turn_ended');
