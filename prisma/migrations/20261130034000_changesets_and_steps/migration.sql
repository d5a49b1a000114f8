-- Issue 6: changesets, their file changes, plan context files; actions and plans gain steps and a validation
-- command. Rows copied by the table rebuilds get '[]' for the new Json columns (no Json defaults: ADR 0002).

-- CreateTable
CREATE TABLE "changesets" (
    "changeset_id" TEXT NOT NULL PRIMARY KEY,
    "plan_id" TEXT NOT NULL,
    "attempt" INTEGER NOT NULL,
    "projects" JSONB NOT NULL,
    "created_at" DATETIME NOT NULL,
    "apply_result" JSONB,
    "applied_at" DATETIME,
    CONSTRAINT "changesets_plan_id_fkey" FOREIGN KEY ("plan_id") REFERENCES "plans" ("plan_id") ON DELETE CASCADE ON UPDATE CASCADE
);

-- CreateTable
CREATE TABLE "file_changes" (
    "changeset_id" TEXT NOT NULL,
    "change_index" INTEGER NOT NULL,
    "project_name" TEXT NOT NULL,
    "operation" TEXT NOT NULL,
    "path" TEXT NOT NULL,
    "from_path" TEXT,
    "before_hash" TEXT,
    "after_hash" TEXT,
    "before_content" BLOB,
    "after_content" BLOB,

    PRIMARY KEY ("changeset_id", "change_index"),
    CONSTRAINT "file_changes_changeset_id_fkey" FOREIGN KEY ("changeset_id") REFERENCES "changesets" ("changeset_id") ON DELETE CASCADE ON UPDATE CASCADE
);

-- CreateTable
CREATE TABLE "plan_context_files" (
    "plan_id" TEXT NOT NULL,
    "path" TEXT NOT NULL,
    "sha256" TEXT NOT NULL,
    "size" INTEGER NOT NULL,
    "content" BLOB NOT NULL,
    "binary" BOOLEAN NOT NULL,
    "added_by" TEXT NOT NULL,
    "added_at" DATETIME NOT NULL,

    PRIMARY KEY ("plan_id", "path"),
    CONSTRAINT "plan_context_files_plan_id_fkey" FOREIGN KEY ("plan_id") REFERENCES "plans" ("plan_id") ON DELETE CASCADE ON UPDATE CASCADE
);

-- RedefineTables
PRAGMA defer_foreign_keys=ON;
PRAGMA foreign_keys=OFF;
CREATE TABLE "new_plans" (
    "plan_id" TEXT NOT NULL PRIMARY KEY,
    "workflow_id" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "action_name" TEXT NOT NULL,
    "description" TEXT NOT NULL,
    "automation_level" TEXT NOT NULL,
    "phase" TEXT NOT NULL,
    "state" TEXT NOT NULL,
    "project_links" JSONB NOT NULL,
    "arguments" JSONB NOT NULL,
    "arguments_order" JSONB NOT NULL,
    "error_type" TEXT,
    "error_message" TEXT,
    "error_details" TEXT,
    "error_at" DATETIME,
    "decision_root_id" TEXT,
    "created_by" TEXT NOT NULL,
    "created_at" DATETIME NOT NULL,
    "updated_at" DATETIME NOT NULL,
    "definition_of_done" TEXT,
    "automation_profile_name" TEXT,
    "effective_profile_snapshot" JSONB,
    "invariants" JSONB NOT NULL,
    "strategy_actor" TEXT,
    "execution_actor" TEXT,
    "estimation_actor" TEXT,
    "invariant_actor" TEXT,
    "tags" JSONB NOT NULL,
    "action_steps" JSONB NOT NULL,
    "validation_command" TEXT,
    "changeset_id" TEXT,
    "sandbox_refs" JSONB NOT NULL,
    "validation_summary" TEXT,
    "parent_plan_id" TEXT,
    "root_plan_id" TEXT,
    "depth" INTEGER NOT NULL DEFAULT 0,
    CONSTRAINT "plans_parent_plan_id_fkey" FOREIGN KEY ("parent_plan_id") REFERENCES "plans" ("plan_id") ON DELETE NO ACTION ON UPDATE NO ACTION
);
INSERT INTO "new_plans" ("action_name", "arguments", "arguments_order", "automation_level", "automation_profile_name", "changeset_id", "created_at", "created_by", "decision_root_id", "definition_of_done", "depth", "description", "effective_profile_snapshot", "error_at", "error_details", "error_message", "error_type", "estimation_actor", "execution_actor", "invariant_actor", "invariants", "name", "parent_plan_id", "phase", "plan_id", "project_links", "root_plan_id", "sandbox_refs", "state", "strategy_actor", "tags", "updated_at", "validation_summary", "workflow_id", "action_steps") SELECT "action_name", "arguments", "arguments_order", "automation_level", "automation_profile_name", "changeset_id", "created_at", "created_by", "decision_root_id", "definition_of_done", "depth", "description", "effective_profile_snapshot", "error_at", "error_details", "error_message", "error_type", "estimation_actor", "execution_actor", "invariant_actor", "invariants", "name", "parent_plan_id", "phase", "plan_id", "project_links", "root_plan_id", "sandbox_refs", "state", "strategy_actor", "tags", "updated_at", "validation_summary", "workflow_id", '[]' FROM "plans";
DROP TABLE "plans";
ALTER TABLE "new_plans" RENAME TO "plans";
CREATE UNIQUE INDEX "plans_workflow_id_key" ON "plans"("workflow_id");
CREATE INDEX "plans_phase_idx" ON "plans"("phase");
CREATE INDEX "plans_state_idx" ON "plans"("state");
CREATE INDEX "plans_action_name_idx" ON "plans"("action_name");
CREATE INDEX "plans_created_at_idx" ON "plans"("created_at");
CREATE INDEX "plans_parent_plan_id_idx" ON "plans"("parent_plan_id");
CREATE INDEX "plans_root_plan_id_idx" ON "plans"("root_plan_id");
CREATE TABLE "new_actions" (
    "name" TEXT NOT NULL PRIMARY KEY,
    "description" TEXT NOT NULL,
    "arguments" JSONB NOT NULL,
    "default_automation_level" TEXT NOT NULL,
    "default_profile" TEXT,
    "actors" JSONB NOT NULL,
    "invariants" JSONB NOT NULL,
    "definition_of_done" TEXT,
    "tags" JSONB NOT NULL,
    "steps" JSONB NOT NULL,
    "validation" TEXT,
    "built_in" BOOLEAN NOT NULL DEFAULT false,
    "created_at" DATETIME NOT NULL,
    "updated_at" DATETIME NOT NULL
);
INSERT INTO "new_actions" ("actors", "arguments", "built_in", "created_at", "default_automation_level", "default_profile", "definition_of_done", "description", "invariants", "name", "tags", "updated_at", "steps") SELECT "actors", "arguments", "built_in", "created_at", "default_automation_level", "default_profile", "definition_of_done", "description", "invariants", "name", "tags", "updated_at", '[]' FROM "actions";
DROP TABLE "actions";
ALTER TABLE "new_actions" RENAME TO "actions";
PRAGMA foreign_keys=ON;
PRAGMA defer_foreign_keys=OFF;

-- CreateIndex
CREATE UNIQUE INDEX "changesets_plan_id_attempt_key" ON "changesets"("plan_id", "attempt");

