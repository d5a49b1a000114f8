-- CreateTable
CREATE TABLE "plans" (
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
    "updated_at" DATETIME NOT NULL
);

-- CreateTable
CREATE TABLE "plan_events" (
    "plan_id" TEXT NOT NULL,
    "sequence_number" INTEGER NOT NULL,
    "event_type" TEXT NOT NULL,
    "phase" TEXT NOT NULL,
    "state" TEXT NOT NULL,
    "actor" TEXT NOT NULL,
    "message" TEXT,
    "at" DATETIME NOT NULL,

    PRIMARY KEY ("plan_id", "sequence_number"),
    CONSTRAINT "plan_events_plan_id_fkey" FOREIGN KEY ("plan_id") REFERENCES "plans" ("plan_id") ON DELETE CASCADE ON UPDATE CASCADE
);

-- CreateTable
CREATE TABLE "decisions" (
    "decision_id" TEXT NOT NULL PRIMARY KEY,
    "plan_id" TEXT NOT NULL,
    "sequence_number" INTEGER NOT NULL,
    "parent_decision_id" TEXT,
    "decision_type" TEXT NOT NULL,
    "phase" TEXT NOT NULL,
    "question" TEXT NOT NULL,
    "chosen_option" TEXT NOT NULL,
    "alternatives_considered" JSONB NOT NULL,
    "confidence_score" REAL,
    "rationale" TEXT NOT NULL,
    "actor" TEXT NOT NULL,
    "created_at" DATETIME NOT NULL,
    CONSTRAINT "decisions_plan_id_fkey" FOREIGN KEY ("plan_id") REFERENCES "plans" ("plan_id") ON DELETE CASCADE ON UPDATE CASCADE,
    CONSTRAINT "decisions_parent_decision_id_fkey" FOREIGN KEY ("parent_decision_id") REFERENCES "decisions" ("decision_id") ON DELETE NO ACTION ON UPDATE NO ACTION
);

-- CreateIndex
CREATE UNIQUE INDEX "plans_workflow_id_key" ON "plans"("workflow_id");

-- CreateIndex
CREATE INDEX "plans_phase_idx" ON "plans"("phase");

-- CreateIndex
CREATE INDEX "plans_state_idx" ON "plans"("state");

-- CreateIndex
CREATE INDEX "plans_action_name_idx" ON "plans"("action_name");

-- CreateIndex
CREATE INDEX "plans_created_at_idx" ON "plans"("created_at");

-- CreateIndex
CREATE INDEX "decisions_parent_decision_id_idx" ON "decisions"("parent_decision_id");

-- CreateIndex
CREATE UNIQUE INDEX "decisions_plan_id_sequence_number_key" ON "decisions"("plan_id", "sequence_number");

