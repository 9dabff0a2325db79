CREATE TABLE `guards` (
	`name` text NOT NULL
);
--> statement-breakpoint
-- A guard is a check a batch makes at its end (src/db/guards.ts): inserting a row aborts the statement, and so
-- the whole batch, with the guard's own message. No row is ever kept.
CREATE TRIGGER `guards_fail` BEFORE INSERT ON `guards` BEGIN SELECT RAISE(ABORT, 'guard failed: ' || NEW.name); END;
