import { type ServerAddress } from '../config.js';
import { fastcgiGet, NoAnswer, NotDelivered } from './fastcgi-get.js';
import { responderRequest } from './fastcgi-records.js';
import { type PreparedGet, type QgisAnswer, type QgisBody, type QgisClient, type QgisParams } from './qgis-get.js';

/**
 * The CGI parameters nginx sends QGIS Server for a GET of `url` through the `/ows/` location of
 * deploy/nginx-qgis-server.conf (Debian's /etc/nginx/fastcgi_params), so that QGIS Server sees
 * the same request either way and answers the same bytes: the URLs it writes into capabilities
 * come from REQUEST_URI, SERVER_PORT and the Host header (HTTP_HOST, nginx's `$host`: the host
 * without its port). That server has no `server_name`, so SERVER_NAME is empty. With `body`, the
 * parameters of a POST of it.
 */
export function cgiParams(url: string, body?: QgisBody): Array<[string, string]> {
  const target = new URL(url);
  const path = decodedPath(target.pathname);
  return [
    ['QUERY_STRING', target.search.slice(1)],
    ['REQUEST_METHOD', body === undefined ? 'GET' : 'POST'],
    ['CONTENT_TYPE', body?.type ?? ''],
    ['CONTENT_LENGTH', body === undefined ? '' : String(body.bytes.length)],
    ['SCRIPT_NAME', path],
    ['REQUEST_URI', target.pathname + target.search],
    ['DOCUMENT_URI', path],
    ['SERVER_PROTOCOL', 'HTTP/1.0'],
    ['REQUEST_SCHEME', 'http'],
    ['GATEWAY_INTERFACE', 'CGI/1.1'],
    ['SERVER_PORT', target.port || '80'],
    ['SERVER_NAME', ''],
    ['REDIRECT_STATUS', '200'],
    ['HTTP_HOST', target.hostname],
  ];
}

/** The path as nginx's `$uri` holds it: percent-decoded. */
function decodedPath(pathname: string): string {
  try {
    return decodeURIComponent(pathname);
  } catch {
    return pathname;
  }
}

interface FastcgiProcess {
  address: ServerAddress;
  /** Requests sent to it whose connection is still open. */
  inFlight: number;
}

/**
 * GETs sent over FastCGI straight to QGIS Server's processes (qgis_mapserv.fcgi, as nginx reaches
 * them), each to the process with the fewest of the API's requests in flight, as nginx's
 * `least_conn` picks. A map then takes one hop between the client and QGIS Server, as it does
 * through nginx, instead of two.
 *
 * Each request has a connection of its own, closed by QGIS Server once it has answered: a
 * qgis_mapserv.fcgi process serves one connection at a time, and one left open between requests
 * would keep it from every other client (nginx's requests would wait until it closed). A request
 * whose connection is refused (a process that exited and is being started again) reached no one,
 * and one whose process closed the connection before any answer (it died) has no answer to keep:
 * either is sent once more to another process, as nginx's `fastcgi_next_upstream error` does.
 * Every request changes nothing in QGIS Server (GETs, and the POST that reads an SLD), which may
 * run it twice.
 *
 * `settings` (config's qgisRequestSettings: PGSERVICEFILE and the like) go with every request as
 * parameters, the only environment QGIS Server has while it serves one.
 */
export class FastcgiQgisClient implements QgisClient {
  private readonly processes: FastcgiProcess[];
  /** Where the search for the least busy process starts, turning, so that ties take turns. */
  private turn = 0;

  constructor(
    addresses: readonly ServerAddress[],
    private readonly settings: ReadonlyArray<[string, string]> = [],
  ) {
    this.processes = addresses.map((address) => ({ address, inFlight: 0 }));
  }

  prepare(url: string, params: QgisParams = [], body?: QgisBody): PreparedGet {
    const request = responderRequest([...cgiParams(url, body), ...this.settings, ...params], body?.bytes);
    return (onSent) => this.send(request, onSent);
  }

  close(): void {
    // Nothing to close: no connection outlives its request.
  }

  private send(request: Buffer, onSent: (() => void) | undefined): Promise<QgisAnswer> {
    const first = this.leastBusy();
    return this.sendTo(first, request, onSent).catch((error: unknown) => {
      if (!(error instanceof NotDelivered || error instanceof NoAnswer)) throw error;
      return this.sendTo(this.leastBusy(first), request, onSent);
    });
  }

  private sendTo(process: FastcgiProcess, request: Buffer, onSent: (() => void) | undefined): Promise<QgisAnswer> {
    process.inFlight++;
    return fastcgiGet(process.address, request, onSent, () => process.inFlight--);
  }

  /** The process with the fewest requests in flight, other than `besides` when there is another. */
  private leastBusy(besides?: FastcgiProcess): FastcgiProcess {
    const count = this.processes.length;
    let best: FastcgiProcess | undefined;
    for (let step = 0; step < count; step++) {
      const candidate = this.processes[(this.turn + step) % count] as FastcgiProcess;
      if (candidate === besides && count > 1) continue;
      if (best === undefined || candidate.inFlight < best.inFlight) best = candidate;
    }
    this.turn = (this.turn + 1) % count;
    return best as FastcgiProcess;
  }
}
