-- Issue 7: scoped invariants (GLOBAL, PROJECT, ACTION, PLAN) with an optional machine-checkable rule.

-- CreateTable
CREATE TABLE "invariants" (
    "invariant_id" TEXT NOT NULL PRIMARY KEY,
    "text" TEXT NOT NULL,
    "scope" TEXT NOT NULL,
    "target" TEXT,
    "rule" JSONB,
    "author" TEXT NOT NULL,
    "created_at" DATETIME NOT NULL
);

-- CreateIndex
CREATE INDEX "invariants_scope_target_idx" ON "invariants"("scope", "target");

