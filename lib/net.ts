import net from 'node:net';

/**
 * A port nothing listens on right now on `host`: the system picks it for a probe that is closed again at once. Another
 * process may take it before the caller binds it; callers then fail to bind and say so.
 */
export function freePort(host = '127.0.0.1'): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = net.createServer();
    probe.once('error', reject);
    probe.listen(0, host, () => {
      const { port } = probe.address() as net.AddressInfo;
      probe.close(() => resolve(port));
    });
  });
}
