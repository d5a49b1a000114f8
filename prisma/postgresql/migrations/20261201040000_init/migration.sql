-- The engine's schema on PostgreSQL as of the SQLite migrations up to 20261130233000_execution_policy:
-- made with `prisma migrate diff --from-empty --to-schema-datamodel prisma/postgresql/schema.prisma --script`.

-- CreateTable
CREATE TABLE "plans" (
    "plan_id" TEXT NOT NULL,
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
    "error_at" TIMESTAMP(3),
    "decision_root_id" TEXT,
    "created_by" TEXT NOT NULL,
    "created_at" TIMESTAMP(3) NOT NULL,
    "updated_at" TIMESTAMP(3) NOT NULL,
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
    "execution_policy" JSONB,

    CONSTRAINT "plans_pkey" PRIMARY KEY ("plan_id")
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
    "at" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "plan_events_pkey" PRIMARY KEY ("plan_id","sequence_number")
);

-- CreateTable
CREATE TABLE "decisions" (
    "decision_id" TEXT NOT NULL,
    "plan_id" TEXT NOT NULL,
    "sequence_number" INTEGER NOT NULL,
    "parent_decision_id" TEXT,
    "decision_type" TEXT NOT NULL,
    "phase" TEXT NOT NULL,
    "question" TEXT NOT NULL,
    "chosen_option" TEXT NOT NULL,
    "alternatives_considered" JSONB NOT NULL,
    "confidence_score" DOUBLE PRECISION,
    "rationale" TEXT NOT NULL,
    "actor" TEXT NOT NULL,
    "created_at" TIMESTAMP(3) NOT NULL,
    "hot_context_hash" TEXT,
    "hot_context_ref" TEXT,
    "relevant_resources" JSONB NOT NULL,
    "actor_state_ref" TEXT,
    "actor_reasoning" TEXT,
    "downstream_decision_ids" JSONB NOT NULL,
    "downstream_plan_ids" JSONB NOT NULL,
    "artifacts_produced" JSONB NOT NULL,
    "is_correction" BOOLEAN NOT NULL DEFAULT false,
    "corrects_decision_id" TEXT,
    "correction_reason" TEXT,
    "superseded_by" TEXT,

    CONSTRAINT "decisions_pkey" PRIMARY KEY ("decision_id")
);

-- CreateTable
CREATE TABLE "decision_contexts" (
    "hash" TEXT NOT NULL,
    "content" TEXT NOT NULL,
    "size" INTEGER NOT NULL,
    "created_at" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "decision_contexts_pkey" PRIMARY KEY ("hash")
);

-- CreateTable
CREATE TABLE "changesets" (
    "changeset_id" TEXT NOT NULL,
    "plan_id" TEXT NOT NULL,
    "attempt" INTEGER NOT NULL,
    "projects" JSONB NOT NULL,
    "created_at" TIMESTAMP(3) NOT NULL,
    "apply_result" JSONB,
    "applied_at" TIMESTAMP(3),

    CONSTRAINT "changesets_pkey" PRIMARY KEY ("changeset_id")
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
    "before_content" BYTEA,
    "after_content" BYTEA,

    CONSTRAINT "file_changes_pkey" PRIMARY KEY ("changeset_id","change_index")
);

-- CreateTable
CREATE TABLE "plan_context_files" (
    "plan_id" TEXT NOT NULL,
    "path" TEXT NOT NULL,
    "sha256" TEXT NOT NULL,
    "size" INTEGER NOT NULL,
    "content" BYTEA NOT NULL,
    "binary" BOOLEAN NOT NULL,
    "added_by" TEXT NOT NULL,
    "added_at" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "plan_context_files_pkey" PRIMARY KEY ("plan_id","path")
);

-- CreateTable
CREATE TABLE "invariants" (
    "invariant_id" TEXT NOT NULL,
    "text" TEXT NOT NULL,
    "scope" TEXT NOT NULL,
    "target" TEXT,
    "rule" JSONB,
    "author" TEXT NOT NULL,
    "created_at" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "invariants_pkey" PRIMARY KEY ("invariant_id")
);

-- CreateTable
CREATE TABLE "actions" (
    "name" TEXT NOT NULL,
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
    "created_at" TIMESTAMP(3) NOT NULL,
    "updated_at" TIMESTAMP(3) NOT NULL,
    "execution" JSONB,

    CONSTRAINT "actions_pkey" PRIMARY KEY ("name")
);

-- CreateTable
CREATE TABLE "projects" (
    "name" TEXT NOT NULL,
    "path" TEXT NOT NULL,
    "description" TEXT NOT NULL,
    "created_at" TIMESTAMP(3) NOT NULL,
    "updated_at" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "projects_pkey" PRIMARY KEY ("name")
);

-- CreateTable
CREATE TABLE "automation_profiles" (
    "name" TEXT NOT NULL,
    "description" TEXT NOT NULL,
    "automation_level" TEXT NOT NULL,
    "min_decision_confidence" DOUBLE PRECISION NOT NULL,
    "max_auto_retries" INTEGER NOT NULL,
    "approval_timeout_seconds" INTEGER,
    "created_at" TIMESTAMP(3) NOT NULL,
    "updated_at" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "automation_profiles_pkey" PRIMARY KEY ("name")
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
CREATE INDEX "plans_parent_plan_id_idx" ON "plans"("parent_plan_id");

-- CreateIndex
CREATE INDEX "plans_root_plan_id_idx" ON "plans"("root_plan_id");

-- CreateIndex
CREATE INDEX "decisions_parent_decision_id_idx" ON "decisions"("parent_decision_id");

-- CreateIndex
CREATE UNIQUE INDEX "decisions_plan_id_sequence_number_key" ON "decisions"("plan_id", "sequence_number");

-- CreateIndex
CREATE UNIQUE INDEX "changesets_plan_id_attempt_key" ON "changesets"("plan_id", "attempt");

-- CreateIndex
CREATE INDEX "invariants_scope_target_idx" ON "invariants"("scope", "target");

-- AddForeignKey
ALTER TABLE "plans" ADD CONSTRAINT "plans_parent_plan_id_fkey" FOREIGN KEY ("parent_plan_id") REFERENCES "plans"("plan_id") ON DELETE NO ACTION ON UPDATE NO ACTION;

-- AddForeignKey
ALTER TABLE "plan_events" ADD CONSTRAINT "plan_events_plan_id_fkey" FOREIGN KEY ("plan_id") REFERENCES "plans"("plan_id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "decisions" ADD CONSTRAINT "decisions_plan_id_fkey" FOREIGN KEY ("plan_id") REFERENCES "plans"("plan_id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "decisions" ADD CONSTRAINT "decisions_parent_decision_id_fkey" FOREIGN KEY ("parent_decision_id") REFERENCES "decisions"("decision_id") ON DELETE NO ACTION ON UPDATE NO ACTION;

-- AddForeignKey
ALTER TABLE "decisions" ADD CONSTRAINT "decisions_hot_context_hash_fkey" FOREIGN KEY ("hot_context_hash") REFERENCES "decision_contexts"("hash") ON DELETE NO ACTION ON UPDATE NO ACTION;

-- AddForeignKey
ALTER TABLE "decisions" ADD CONSTRAINT "decisions_corrects_decision_id_fkey" FOREIGN KEY ("corrects_decision_id") REFERENCES "decisions"("decision_id") ON DELETE NO ACTION ON UPDATE NO ACTION;

-- AddForeignKey
ALTER TABLE "decisions" ADD CONSTRAINT "decisions_superseded_by_fkey" FOREIGN KEY ("superseded_by") REFERENCES "decisions"("decision_id") ON DELETE NO ACTION ON UPDATE NO ACTION;

-- AddForeignKey
ALTER TABLE "changesets" ADD CONSTRAINT "changesets_plan_id_fkey" FOREIGN KEY ("plan_id") REFERENCES "plans"("plan_id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "file_changes" ADD CONSTRAINT "file_changes_changeset_id_fkey" FOREIGN KEY ("changeset_id") REFERENCES "changesets"("changeset_id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "plan_context_files" ADD CONSTRAINT "plan_context_files_plan_id_fkey" FOREIGN KEY ("plan_id") REFERENCES "plans"("plan_id") ON DELETE CASCADE ON UPDATE CASCADE;

