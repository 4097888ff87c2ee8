/**
 * A local network of hosts on this machine for tests that need several machines: each host is a
 * network namespace (`ip netns`) with a veth pair into one bridge, all on one /24. This machine is
 * `gateway` on the bridge; `relay` makes one of its loopback services reachable from the hosts.
 * Needs root. `close` removes everything it made.
 */
import { execFile } from 'node:child_process';
import { randomBytes, randomInt } from 'node:crypto';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { promisify } from 'node:util';

const run = promisify(execFile);

async function ip(...args: string[]): Promise<void> {
  await run('ip', args);
}

export interface Lan {
  /** This machine's address on the network. */
  gateway: string;
  /** The address of a host. */
  address(host: string): string;
  /** The command prefix that runs a program on a host. */
  exec(host: string): string[];
  /** Forwards connections to `gateway:<returned port>` to `target`, a port of this machine. */
  relay(target: { host: string; port: number }): Promise<number>;
  close(): Promise<void>;
}

export async function createLan(hosts: readonly string[]): Promise<Lan> {
  const tag = randomBytes(3).toString('hex');
  const subnet = `10.${randomInt(200, 250)}.${randomInt(0, 256)}`;
  const bridge = `stb${tag}`;
  const namespaces = new Map(hosts.map((host, index) => [host, { ns: `steward-${tag}-${host}`, index }]));
  const servers: Server[] = [];
  const relayed = new Set<Socket>();
  const made: string[] = [];
  const lan: Lan = {
    gateway: `${subnet}.1`,
    address: (host) => `${subnet}.${10 + (namespaces.get(host)?.index ?? 0)}`,
    exec: (host) => ['ip', 'netns', 'exec', namespaces.get(host)?.ns ?? host],
    async relay(target) {
      const server = createServer((socket) => {
        const upstream = connect(target.port, target.host);
        for (const end of [socket, upstream]) {
          relayed.add(end);
          end.on('close', () => relayed.delete(end));
        }
        socket.pipe(upstream).pipe(socket);
        socket.on('error', () => upstream.destroy());
        upstream.on('error', () => socket.destroy());
      });
      servers.push(server);
      await new Promise<void>((resolve) => server.listen(0, lan.gateway, resolve));
      const address = server.address();
      return typeof address === 'object' && address ? address.port : 0;
    },
    async close() {
      for (const server of servers) server.close();
      // A host's namespace can go before its connections' FIN reaches us; an open relay would keep the test alive.
      for (const end of relayed) end.destroy();
      for (const ns of made) await ip('netns', 'del', ns).catch(() => undefined);
      await ip('link', 'del', bridge).catch(() => undefined);
    },
  };
  try {
    await ip('link', 'add', bridge, 'type', 'bridge');
    await ip('addr', 'add', `${lan.gateway}/24`, 'dev', bridge);
    await ip('link', 'set', bridge, 'up');
    for (const [host, { ns, index }] of namespaces) {
      await ip('netns', 'add', ns);
      made.push(ns);
      const outside = `st${tag}${index}a`;
      const inside = `st${tag}${index}b`;
      await ip('link', 'add', outside, 'type', 'veth', 'peer', 'name', inside);
      await ip('link', 'set', inside, 'netns', ns);
      await ip('link', 'set', outside, 'master', bridge);
      await ip('link', 'set', outside, 'up');
      await ip('netns', 'exec', ns, 'ip', 'addr', 'add', `${lan.address(host)}/24`, 'dev', inside);
      await ip('netns', 'exec', ns, 'ip', 'link', 'set', inside, 'up');
      await ip('netns', 'exec', ns, 'ip', 'link', 'set', 'lo', 'up');
    }
  } catch (error) {
    await lan.close();
    throw error;
  }
  return lan;
}
