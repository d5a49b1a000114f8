-- CreateTable
CREATE TABLE "decision_contexts" (
    "hash" TEXT NOT NULL PRIMARY KEY,
    "content" TEXT NOT NULL,
    "size" INTEGER NOT NULL,
    "created_at" DATETIME NOT NULL
);

-- RedefineTables
-- Edited after `prisma migrate diff` (see docs/decisions/0002 and 0004): the copy below fills the new NOT NULL Json
-- columns, which have no column default, so that existing decisions survive the table rebuild: '[]' for the lists
-- nothing recorded before, and downstream_decision_ids from the existing children, in sequence order (aggregate
-- ORDER BY needs SQLite 3.44; better-sqlite3 12 ships 3.5x).
PRAGMA defer_foreign_keys=ON;
PRAGMA foreign_keys=OFF;
CREATE TABLE "new_decisions" (
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
    CONSTRAINT "decisions_plan_id_fkey" FOREIGN KEY ("plan_id") REFERENCES "plans" ("plan_id") ON DELETE CASCADE ON UPDATE CASCADE,
    CONSTRAINT "decisions_parent_decision_id_fkey" FOREIGN KEY ("parent_decision_id") REFERENCES "decisions" ("decision_id") ON DELETE NO ACTION ON UPDATE NO ACTION,
    CONSTRAINT "decisions_hot_context_hash_fkey" FOREIGN KEY ("hot_context_hash") REFERENCES "decision_contexts" ("hash") ON DELETE NO ACTION ON UPDATE NO ACTION,
    CONSTRAINT "decisions_corrects_decision_id_fkey" FOREIGN KEY ("corrects_decision_id") REFERENCES "decisions" ("decision_id") ON DELETE NO ACTION ON UPDATE NO ACTION,
    CONSTRAINT "decisions_superseded_by_fkey" FOREIGN KEY ("superseded_by") REFERENCES "decisions" ("decision_id") ON DELETE NO ACTION ON UPDATE NO ACTION
);
INSERT INTO "new_decisions" ("actor", "alternatives_considered", "chosen_option", "confidence_score", "created_at", "decision_id", "decision_type", "parent_decision_id", "phase", "plan_id", "question", "rationale", "sequence_number", "relevant_resources", "downstream_decision_ids", "downstream_plan_ids", "artifacts_produced") SELECT "actor", "alternatives_considered", "chosen_option", "confidence_score", "created_at", "decision_id", "decision_type", "parent_decision_id", "phase", "plan_id", "question", "rationale", "sequence_number", '[]', (SELECT json_group_array("c"."decision_id" ORDER BY "c"."sequence_number") FROM "decisions" AS "c" WHERE "c"."parent_decision_id" = "d"."decision_id"), '[]', '[]' FROM "decisions" AS "d";
DROP TABLE "decisions";
ALTER TABLE "new_decisions" RENAME TO "decisions";
CREATE INDEX "decisions_parent_decision_id_idx" ON "decisions"("parent_decision_id");
CREATE UNIQUE INDEX "decisions_plan_id_sequence_number_key" ON "decisions"("plan_id", "sequence_number");
PRAGMA foreign_keys=ON;
PRAGMA defer_foreign_keys=OFF;

