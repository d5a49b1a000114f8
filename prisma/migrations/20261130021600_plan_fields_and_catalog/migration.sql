-- CreateTable
CREATE TABLE "actions" (
    "name" TEXT NOT NULL PRIMARY KEY,
    "description" TEXT NOT NULL,
    "arguments" JSONB NOT NULL,
    "default_automation_level" TEXT NOT NULL,
    "default_profile" TEXT,
    "actors" JSONB NOT NULL,
    "invariants" JSONB NOT NULL,
    "definition_of_done" TEXT,
    "tags" JSONB NOT NULL,
    "built_in" BOOLEAN NOT NULL DEFAULT false,
    "created_at" DATETIME NOT NULL,
    "updated_at" DATETIME NOT NULL
);

-- CreateTable
CREATE TABLE "projects" (
    "name" TEXT NOT NULL PRIMARY KEY,
    "path" TEXT NOT NULL,
    "description" TEXT NOT NULL,
    "created_at" DATETIME NOT NULL,
    "updated_at" DATETIME NOT NULL
);

-- CreateTable
CREATE TABLE "automation_profiles" (
    "name" TEXT NOT NULL PRIMARY KEY,
    "description" TEXT NOT NULL,
    "automation_level" TEXT NOT NULL,
    "min_decision_confidence" REAL NOT NULL,
    "max_auto_retries" INTEGER NOT NULL,
    "approval_timeout_seconds" INTEGER,
    "created_at" DATETIME NOT NULL,
    "updated_at" DATETIME NOT NULL
);

-- RedefineTables
-- Edited after `prisma migrate diff`: the copy below fills '[]' into the new NOT NULL Json columns, which have no
-- column default (see schema.prisma on why), so that existing plans survive the table rebuild.
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
    "changeset_id" TEXT,
    "sandbox_refs" JSONB NOT NULL,
    "validation_summary" TEXT,
    "parent_plan_id" TEXT,
    "root_plan_id" TEXT,
    "depth" INTEGER NOT NULL DEFAULT 0,
    CONSTRAINT "plans_parent_plan_id_fkey" FOREIGN KEY ("parent_plan_id") REFERENCES "plans" ("plan_id") ON DELETE NO ACTION ON UPDATE NO ACTION
);
INSERT INTO "new_plans" ("action_name", "arguments", "arguments_order", "automation_level", "created_at", "created_by", "decision_root_id", "description", "error_at", "error_details", "error_message", "error_type", "name", "phase", "plan_id", "project_links", "state", "updated_at", "workflow_id", "invariants", "tags", "sandbox_refs") SELECT "action_name", "arguments", "arguments_order", "automation_level", "created_at", "created_by", "decision_root_id", "description", "error_at", "error_details", "error_message", "error_type", "name", "phase", "plan_id", "project_links", "state", "updated_at", "workflow_id", '[]', '[]', '[]' FROM "plans";
DROP TABLE "plans";
ALTER TABLE "new_plans" RENAME TO "plans";
CREATE UNIQUE INDEX "plans_workflow_id_key" ON "plans"("workflow_id");
CREATE INDEX "plans_phase_idx" ON "plans"("phase");
CREATE INDEX "plans_state_idx" ON "plans"("state");
CREATE INDEX "plans_action_name_idx" ON "plans"("action_name");
CREATE INDEX "plans_created_at_idx" ON "plans"("created_at");
CREATE INDEX "plans_parent_plan_id_idx" ON "plans"("parent_plan_id");
CREATE INDEX "plans_root_plan_id_idx" ON "plans"("root_plan_id");
PRAGMA foreign_keys=ON;
PRAGMA defer_foreign_keys=OFF;

