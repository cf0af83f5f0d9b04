-- A webhook event's delivery stays on its row's page (a HOT update, no entry in any index; docs/capacity.md,
-- the service's PostgreSQL): webhook_events.status, which every delivery changes, is no longer indexed. No
-- query read it through an index: the event log filters it on top of the merchant's own index. Dropping an
-- index changes only the catalog: the table's lock is held for a moment, nothing is rewritten.
DROP INDEX IF EXISTS "webhook_events_status_idx";
