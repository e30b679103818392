-- Each stored chunk of a large output knows the line it starts on, so retrieve_output can page by
-- line without reading the chunks before it.
alter table tool_output_chunks add column first_line bigint not null default 0;
