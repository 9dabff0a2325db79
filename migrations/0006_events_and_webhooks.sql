CREATE TABLE `events` (
	`seq` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`id` text NOT NULL,
	`org_id` text NOT NULL,
	`type` text NOT NULL,
	`created_at` integer NOT NULL,
	`body` text NOT NULL,
	`enqueued_at` integer,
	FOREIGN KEY (`org_id`) REFERENCES `orgs`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `events_id` ON `events` (`id`);--> statement-breakpoint
CREATE INDEX `events_org_seq` ON `events` (`org_id`,`seq`);--> statement-breakpoint
CREATE INDEX `events_org_type_seq` ON `events` (`org_id`,`type`,`seq`);--> statement-breakpoint
CREATE INDEX `events_created` ON `events` (`created_at`);--> statement-breakpoint
CREATE INDEX `events_unenqueued` ON `events` (`created_at`) WHERE "events"."enqueued_at" IS NULL;--> statement-breakpoint
CREATE TABLE `webhook_deliveries` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`org_id` text NOT NULL,
	`event_id` text NOT NULL,
	`endpoint_id` text NOT NULL,
	`attempt` integer NOT NULL,
	`status` text NOT NULL,
	`http_status` integer,
	`duration_ms` integer NOT NULL,
	`error` text,
	`at` integer NOT NULL,
	FOREIGN KEY (`org_id`) REFERENCES `orgs`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `webhook_deliveries_org` ON `webhook_deliveries` (`org_id`,`id`);--> statement-breakpoint
CREATE INDEX `webhook_deliveries_org_event` ON `webhook_deliveries` (`org_id`,`event_id`,`endpoint_id`,`at`);--> statement-breakpoint
CREATE INDEX `webhook_deliveries_org_endpoint` ON `webhook_deliveries` (`org_id`,`endpoint_id`,`id`);--> statement-breakpoint
CREATE INDEX `webhook_deliveries_at` ON `webhook_deliveries` (`at`);--> statement-breakpoint
CREATE TABLE `webhook_endpoints` (
	`id` text PRIMARY KEY NOT NULL,
	`org_id` text NOT NULL,
	`url` text NOT NULL,
	`events` text NOT NULL,
	`status` text DEFAULT 'enabled' NOT NULL,
	`created_at` integer NOT NULL,
	`disabled_at` integer,
	FOREIGN KEY (`org_id`) REFERENCES `orgs`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `webhook_endpoints_org` ON `webhook_endpoints` (`org_id`,`created_at`);--> statement-breakpoint
CREATE TABLE `webhook_replays` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`org_id` text NOT NULL,
	`event_id` text NOT NULL,
	`endpoint_id` text NOT NULL,
	`requested_at` integer NOT NULL,
	FOREIGN KEY (`org_id`) REFERENCES `orgs`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE TABLE `webhook_secrets` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`org_id` text NOT NULL,
	`endpoint_id` text NOT NULL,
	`ciphertext` text NOT NULL,
	`created_at` integer NOT NULL,
	`expires_at` integer,
	FOREIGN KEY (`org_id`) REFERENCES `orgs`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`endpoint_id`) REFERENCES `webhook_endpoints`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `webhook_secrets_endpoint` ON `webhook_secrets` (`endpoint_id`);