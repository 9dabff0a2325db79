DROP INDEX `incidents_org_starts`;--> statement-breakpoint
CREATE INDEX `incidents_org_starts_ends` ON `incidents` (`org_id`,`starts_at`,`ends_at`);