/** Removes the cluster test/global-setup-postgresql.ts started (runs in the same process as the setup). */
export default async function globalTeardownPostgresql(): Promise<void> {
  globalThis.agentsTestPostgres?.destroy();
  globalThis.agentsTestPostgres = undefined;
}
