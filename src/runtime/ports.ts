import { connect, createServer } from 'node:net';

/**
 * Ports handed out below Linux's default range of ephemeral ports (32768-60999). A port the kernel
 * picks for `listen(0)` comes from that range, where any outgoing connection may take it as its
 * local port before the server meant to have it binds it ("address already in use").
 */
const FIRST_PORT = 20_000;
const PORTS = 12_768;
const ATTEMPTS = 50;

/** Whether `port` can be listened on now; false when it is taken. */
function bindable(port: number, host: string): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.unref();
    server.once('error', () => resolve(false));
    server.listen(port, host, () => server.close(() => resolve(true)));
  });
}

/**
 * Ports this process has handed out: one is free until its server binds it, which may be seconds
 * later (a stack picks all its ports, then starts its servers), so it is never handed out twice.
 */
const handedOut = new Set<number>();

/** A free loopback port outside the ephemeral range, or one the kernel picks if none is found. */
export async function freePort(host = '127.0.0.1'): Promise<number> {
  for (let attempt = 0; attempt < ATTEMPTS; attempt += 1) {
    const port = FIRST_PORT + Math.floor(Math.random() * PORTS);
    if (handedOut.has(port) || !(await bindable(port, host))) continue;
    handedOut.add(port);
    return port;
  }
  return kernelPort(host);
}

function kernelPort(host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, host, () => {
      const address = server.address();
      server.close(() => {
        if (address && typeof address === 'object') resolve(address.port);
        else reject(new Error('no port was assigned'));
      });
    });
  });
}

/** True when something accepts TCP connections on host:port. */
export function accepts(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host, port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}
