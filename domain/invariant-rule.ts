/**
 * The machine-checkable rule an invariant may carry (issue 7): the built-in invariant check enforces it exactly,
 * whatever actor the plan uses for free text. Written by people on the command line (`--rule`), so the keys are
 * snake_case and the text may be YAML or JSON:
 *
 *   protected_paths: ["src/**", "LICENSE"]   # no change may create, modify, delete or move these
 *   max_changed_files: 10                     # the changeset may touch at most this many files
 *   undeletable_paths: ["migrations/**"]     # no change may delete these (or move them away)
 *   command: npm test                         # must exit 0 in the sandbox before Apply
 *
 * Globs are matched against paths relative to each project's root. A rule needs at least one key; every key given
 * must hold.
 */
import YAML from 'yaml';
import { z } from 'zod';

const glob = z
  .string()
  .trim()
  .min(1, 'must not be empty')
  .refine((g) => !g.startsWith('/') && !g.split('/').includes('..'), 'must be relative to the project root');

export const invariantRuleSchema = z
  .strictObject({
    protected_paths: z.array(glob).min(1, 'must list at least one glob').optional(),
    max_changed_files: z.number().int().min(0, 'must be 0 or more').optional(),
    undeletable_paths: z.array(glob).min(1, 'must list at least one glob').optional(),
    command: z.string().trim().min(1, 'must not be empty').optional(),
  })
  .refine((rule) => Object.values(rule).some((v) => v !== undefined), {
    message: 'a rule needs at least one of protected_paths, max_changed_files, undeletable_paths, command',
  });
export type InvariantRule = z.infer<typeof invariantRuleSchema>;

export const RULE_KEYS = ['protected_paths', 'max_changed_files', 'undeletable_paths', 'command'] as const;

export type RuleParseResult = { ok: true; rule: InvariantRule } | { ok: false; error: string };

/** Parses `--rule` text (YAML or JSON, which is YAML) into a rule; errors are one line naming the key. */
export function parseInvariantRule(text: string): RuleParseResult {
  if (text.trim() === '') return { ok: false, error: 'the rule is empty' };
  const doc = YAML.parseDocument(text);
  const first = doc.errors[0];
  if (first !== undefined) {
    return {
      ok: false,
      error: `the rule is not valid YAML or JSON: ${(first.message.split('\n')[0] ?? '').trim()}`,
    };
  }
  const data: unknown = doc.toJS();
  if (typeof data !== 'object' || data === null || Array.isArray(data)) {
    return {
      ok: false,
      error: `the rule must be a mapping with any of ${RULE_KEYS.join(', ')}, e.g. '{protected_paths: ["src/**"]}'`,
    };
  }
  const parsed = invariantRuleSchema.safeParse(data);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = issue === undefined || issue.path.length === 0 ? '' : `${issue.path.join('.')}: `;
    const message =
      issue?.code === 'unrecognized_keys'
        ? `unknown key ${issue.keys.join(', ')} (allowed: ${RULE_KEYS.join(', ')})`
        : (issue?.message ?? 'invalid');
    return { ok: false, error: `the rule is invalid: ${where}${message}` };
  }
  return { ok: true, rule: parsed.data };
}

/** One line describing a rule, for tables and decisions. */
export function describeRule(rule: InvariantRule): string {
  const parts: string[] = [];
  if (rule.protected_paths !== undefined) parts.push(`protected: ${rule.protected_paths.join(', ')}`);
  if (rule.max_changed_files !== undefined) parts.push(`at most ${rule.max_changed_files} changed file(s)`);
  if (rule.undeletable_paths !== undefined) parts.push(`never deleted: ${rule.undeletable_paths.join(', ')}`);
  if (rule.command !== undefined) parts.push(`\`${rule.command}\` passes in the sandbox`);
  return parts.join('; ');
}
