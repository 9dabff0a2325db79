CREATE INDEX `incidents_org_starts_ends` ON `incidents` (`org_id`,`starts_at`,`ends_at`);--> statement-breakpoint
DROP INDEX `incidents_org_starts`;