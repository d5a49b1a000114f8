/**
 * The `replace` step's guards against an untrusted pattern and untrusted argument values: the pattern runs in a
 * thread with a time limit (the worker's event loop keeps running meanwhile, and cancellation stops it), and a value
 * substituted into `with:` is inserted literally. Each test tries to get past its guard.
 */
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { runStep, StepError } from '../../actors/steps';
import type { StepEnv } from '../../actors/steps';
import type { PlanSpec } from '../../domain/plan';
import { planSpecSchema } from '../../domain/schemas';
import type { StepFile } from '../../domain/steps';
import { regexReplacementLiteral, stepFromFile } from '../../domain/steps';
import { CREATED_AT, PLAN_ID } from '../unit/fixtures';

/**
 * `^(a+)+$` backtracks through every split of the a's before failing on the final b: 2^40 ways, hours on any
 * machine, so every test reaches its limit (with 2^28 a fast machine finished inside the ten seconds).
 */
const CATASTROPHIC = { pattern: '^(a+)+$', text: `${'a'.repeat(40)}b\n` };

let base: string;
let sandbox: string;

beforeEach(async () => {
  base = await fs.mkdtemp(path.join(os.tmpdir(), 'replace-step-'));
  sandbox = path.join(base, 'sandbox');
  await fs.mkdir(sandbox);
});

afterEach(async () => {
  await fs.rm(base, { recursive: true, force: true });
});

function plan(args: Record<string, string> = {}): PlanSpec {
  return planSpecSchema.parse({
    planId: PLAN_ID,
    name: 'replace plan',
    actionName: 'local/demo',
    projects: [{ projectName: 'acme/api' }],
    automationLevel: 'MANUAL',
    arguments: args,
    argumentsOrder: Object.keys(args),
    createdAt: CREATED_AT,
  });
}

function env(options: Partial<StepEnv> & { args?: Record<string, string> } = {}): StepEnv {
  return {
    plan: plan(options.args),
    workspaces: [{ projectName: 'acme/api', alias: null, readOnly: false, root: base, sandbox }],
    signal: options.signal ?? new AbortController().signal,
    progress: () => undefined,
    // A replace runs no command: were one run here, it would be refused rather than run unisolated.
    isolation: { mode: 'unavailable', reason: 'the replace tests run no command' },
    ...(options.replaceTimeLimitSeconds === undefined
      ? {}
      : { replaceTimeLimitSeconds: options.replaceTimeLimitSeconds }),
  };
}

const replace = (file: Omit<Extract<StepFile, { replace: string }>, 'replace'> & { replace?: string }) =>
  stepFromFile({ replace: '*.txt', ...file });

async function write(rel: string, content: string): Promise<void> {
  await fs.writeFile(path.join(sandbox, rel), content);
}

const read = (rel: string) => fs.readFile(path.join(sandbox, rel), 'utf8');

/** Counts how often a 10 ms interval fires while `work` runs: it fires only while the event loop is free. */
async function ticksDuring(work: () => Promise<unknown>): Promise<{ ticks: number; elapsedMs: number }> {
  let ticks = 0;
  const timer = setInterval(() => ticks++, 10);
  const started = Date.now();
  try {
    await work().catch(() => undefined);
  } finally {
    clearInterval(timer);
  }
  return { ticks, elapsedMs: Date.now() - started };
}

describe('replace: a pattern that backtracks catastrophically', () => {
  it('fails the step naming the file once the time limit is up, while the event loop keeps running', async () => {
    await write('a-fine.txt', 'nothing to see\n');
    await write('b-evil.txt', CATASTROPHIC.text);
    const step = replace({ pattern: CATASTROPHIC.pattern, with: 'x', flags: 'm' });
    let error: unknown;
    const { ticks, elapsedMs } = await ticksDuring(() =>
      runStep(step, env({ replaceTimeLimitSeconds: 1 })).catch((e: unknown) => {
        error = e;
      }),
    );
    expect(error).toBeInstanceOf(StepError);
    expect((error as StepError).message).toBe(
      'replace /^(a+)+$/ in *.txt: the pattern took too long (over the limit of 1 s for the step) on b-evil.txt; ' +
        'it was stopped. A pattern with nested repetition such as (a+)+ can backtrack for hours on a text it ' +
        'does not match: make it more specific.',
    );
    // Stopped at the limit, not when the expression gave up.
    expect(elapsedMs).toBeGreaterThanOrEqual(1000);
    expect(elapsedMs).toBeLessThan(5000);
    // On the event loop the interval could not have fired at all during the second it ran; loose for a busy CI.
    expect(ticks).toBeGreaterThanOrEqual(30);
    expect(await read('b-evil.txt')).toBe(CATASTROPHIC.text);
  });

  it('has ten seconds by default', async () => {
    await write('evil.txt', CATASTROPHIC.text);
    const started = Date.now();
    await expect(runStep(replace({ pattern: CATASTROPHIC.pattern, with: 'x' }), env())).rejects.toThrow(
      /took too long \(over the limit of 10 s for the step\) on evil\.txt/,
    );
    expect(Date.now() - started).toBeGreaterThanOrEqual(10_000);
  }, 30_000);

  it('counts the limit over the whole step, not per file', async () => {
    // Each file alone takes a small part of the limit (a few hundredths of a second once compiled), so even a busy
    // machine gets past the first one; two hundred take several seconds.
    const slow = `${'a'.repeat(21)}b\n`;
    for (let i = 0; i < 200; i++) await write(`f${String(i).padStart(3, '0')}.txt`, slow);
    const started = Date.now();
    const error = await runStep(
      replace({ pattern: CATASTROPHIC.pattern, with: 'x', flags: 'm', require_match: false }),
      env({ replaceTimeLimitSeconds: 2 }),
    ).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StepError);
    expect((error as StepError).message).toMatch(
      /took too long \(over the limit of 2 s for the step\) on f\d{3}\.txt/,
    );
    // Some files were done before the time ran out: the limit was the step's, not the file's.
    expect((error as StepError).message).not.toMatch(/ on f000\.txt/);
    expect(Date.now() - started).toBeLessThan(6000);
  });

  it('stops when the step is cancelled, rejecting with the reason and leaving the file alone', async () => {
    await write('evil.txt', CATASTROPHIC.text);
    const controller = new AbortController();
    const reason = new Error('plan cancelled');
    setTimeout(() => controller.abort(reason), 300);
    const started = Date.now();
    let error: unknown;
    const { ticks } = await ticksDuring(() =>
      runStep(
        replace({ pattern: CATASTROPHIC.pattern, with: 'x' }),
        env({ signal: controller.signal }),
      ).catch((e: unknown) => {
        error = e;
      }),
    );
    expect(error).toBe(reason);
    // Well before the ten-second limit: the cancellation, not the timer, stopped it.
    expect(Date.now() - started).toBeLessThan(3000);
    expect(ticks).toBeGreaterThanOrEqual(10);
    expect(await read('evil.txt')).toBe(CATASTROPHIC.text);
  });
});

describe('replace: still what it was', () => {
  it('replaces every match with group references, skips binaries and requires a match', async () => {
    await write('a.txt', 'Copyright 2020, Copyright 2021\n');
    await write('b.txt', 'nothing\n');
    await fs.writeFile(path.join(sandbox, 'c.txt'), Buffer.from('Copyright 2020\0binary'));
    const report = await runStep(replace({ pattern: 'Copyright (\\d+)', with: '(c) $1' }), env());
    expect(report.filesTouched).toEqual(['a.txt']);
    expect(await read('a.txt')).toBe('(c) 2020, (c) 2021\n');
    expect(await fs.readFile(path.join(sandbox, 'c.txt'))).toEqual(Buffer.from('Copyright 2020\0binary'));
    await expect(runStep(replace({ pattern: 'absent', with: 'x' }), env())).rejects.toThrow(
      /matches in none of the 3 matching file\(s\)/,
    );
    await expect(runStep(replace({ pattern: '(', with: 'x' }), env())).rejects.toThrow(
      /invalid regular expression/,
    );
  });
});

describe('replace: a value substituted into with: is literal', () => {
  it("inserts an argument's $ sequences as written instead of expanding them", async () => {
    const file = 'public: KEY\nsecret: s3cr3t\n';
    for (const value of ["$'", '$`', '$&', '$1', '$$', '$<name>']) {
      await write('config.txt', file);
      await runStep(replace({ pattern: '(KEY)', with: '{{value}}' }), env({ args: { value } }));
      // Expanded, `$'` would have copied the secret line into the public one.
      expect(await read('config.txt')).toBe(`public: ${value}\nsecret: s3cr3t\n`);
    }
  });

  it("keeps the template author's own backreferences working beside a value", async () => {
    await write('v.txt', 'version = 1.2.3\n');
    await runStep(
      replace({ pattern: '(version) = (\\S+)', with: "$1 = {{next}} (was $2, $$ literal, match '$&')" }),
      env({ args: { next: "$2$'" } }),
    );
    expect(await read('v.txt')).toBe("version = $2$' (was 1.2.3, $ literal, match 'version = 1.2.3')\n");
  });

  it('doubles every $ of a value and nothing else', () => {
    expect(regexReplacementLiteral("a$'b$$c")).toBe("a$$'b$$$$c");
    expect(regexReplacementLiteral('no dollars')).toBe('no dollars');
    expect('x'.replace('x', regexReplacementLiteral("$&$'$`$1"))).toBe("$&$'$`$1");
  });
});
