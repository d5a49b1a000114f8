/**
 * `npm start` and `npm test` find out first whether plans' commands can be boxed (sandbox/isolation.ts) and, where
 * they cannot, say how to get there, as ensureTemporalCli does for a missing Temporal CLI.
 */
import type { SandboxIsolationMode } from '../config/env';
import type { Isolation } from '../sandbox/isolation';
import { describeIsolation, detectIsolation } from '../sandbox/isolation';

export interface IsolationCheck {
  isolation: Isolation;
  /** What to tell the person, line by line; empty when commands will be boxed. */
  advice: string[];
}

export async function checkIsolation(options: {
  mode: SandboxIsolationMode;
  cpuSeconds: number;
}): Promise<IsolationCheck> {
  const isolation = await detectIsolation(options);
  switch (isolation.mode) {
    case 'bwrap':
      return { isolation, advice: [] };
    case 'none':
      return { isolation, advice: [describeIsolation(isolation)] };
    case 'unavailable':
      return {
        isolation,
        advice: [
          "Plans' commands (run steps, validation commands, command rules) run in a bubblewrap box, which does not " +
            'work here:',
          `  ${isolation.reason}`,
          'To fix it:',
          '  - install it: `sudo apt-get install -y bubblewrap` (Debian, Ubuntu), `sudo dnf install -y bubblewrap` ' +
            '(Fedora), `sudo pacman -S bubblewrap` (Arch);',
          '  - installed but failing: unprivileged user namespaces may be off (`sysctl ' +
            'kernel.unprivileged_userns_clone=1` on Debian; `sysctl kernel.apparmor_restrict_unprivileged_userns=0` on ' +
            'Ubuntu 24.04 and later; in a container, a seccomp profile that allows them);',
          '  - or set SANDBOX_ISOLATION=none to run commands unisolated: they can then read and write whatever you can.',
        ],
      };
  }
}
