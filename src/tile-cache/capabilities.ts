/**
 * MapProxy's capabilities documents with only some of their layers: what the tile cache serves to
 * an identity that may not read every layer of a project (docs/access.md, "The tile cache"). The
 * API asks MapProxy on its loopback address (STEWARD_MAPPROXY_URL) and takes the other layers out
 * of the document, as if MapProxy did not have them.
 */
import { BadGateway } from '../errors.js';
import { childText, firstChild, removeChild, type XmlElement } from '../qgis/xml/node.js';
import { parseXml, XmlSyntaxError } from '../qgis/xml/parse.js';
import { serializeXml } from '../qgis/xml/serialize.js';

/** How long MapProxy may take to write a capabilities document. */
const CAPABILITIES_TIMEOUT_MS = 30_000;

/** A capabilities document as MapProxy answered it. */
export interface CapabilitiesDocument {
  contentType: string;
  body: string;
}

/** What shapes the addresses MapProxy writes into a document: the host and scheme the client asked with. */
export interface ClientAddress {
  host?: string | undefined;
  proto?: string | undefined;
}

/**
 * The layer an element of a MapProxy capabilities document describes, if it describes one: a WMS
 * `Layer` by its `Name` (the root layer has none), a WMTS `Layer` by its `ows:Identifier`, a TMS
 * `TileMap` of the service's list by its title (the layer's name: mapproxyConfig titles each layer
 * so), and a WMS-C `TileSet` by its `Layers`.
 */
function describedLayer(node: XmlElement): string | undefined {
  if (node.name === 'Layer') {
    const named = firstChild(node, 'Name') ?? firstChild(node, 'ows:Identifier');
    return named === undefined ? undefined : childText(named);
  }
  if (node.name === 'TileMap') return node.attributes.get('title');
  if (node.name === 'TileSet') return childText(node, 'Layers');
  return undefined;
}

/** Takes out of `parent`, at any depth, the elements describing a layer that `listed` refuses. */
function removeUnlisted(parent: XmlElement, listed: (layer: string) => boolean): void {
  for (const node of [...parent.children]) {
    if (node.kind !== 'element') continue;
    const layer = describedLayer(node);
    if (layer !== undefined && !listed(layer)) removeChild(parent, node);
    else removeUnlisted(node, listed);
  }
}

/**
 * A MapProxy capabilities document (WMTS, TMS, WMS) listing only the layers `listed` takes; the
 * rest is written back as MapProxy wrote it.
 */
export function withListedLayers(document: string, listed: (layer: string) => boolean): string {
  const parsed = parseXml(document);
  removeUnlisted(parsed.root, listed);
  return serializeXml(parsed);
}

/** MapProxy's capabilities documents, asked on its own address, as a client through nginx would get them. */
export class MapProxyCapabilities {
  constructor(private readonly mapproxyUrl: string) {}

  /**
   * The document at `path` (`/<app>/...`, with its query) for a client that asked at `client`,
   * listing only the layers `listed` takes.
   */
  async listing(
    path: string,
    client: ClientAddress,
    listed: (layer: string) => boolean,
  ): Promise<CapabilitiesDocument> {
    const { contentType, body } = await this.fetch(path, client);
    try {
      return { contentType, body: withListedLayers(body, listed) };
    } catch (error) {
      if (!(error instanceof XmlSyntaxError)) throw error;
      throw new BadGateway(`MapProxy's document at ${path} is not XML Steward can read: ${error.message}`, {
        clientMessage: "the tile cache's capabilities cannot be read",
      });
    }
  }

  private async fetch(path: string, client: ClientAddress): Promise<CapabilitiesDocument> {
    const url = new URL(path, this.mapproxyUrl);
    // MapProxy writes its addresses from X-Forwarded-Host before Host (fetch sends its own Host).
    const headers: Record<string, string> = {};
    if (client.host !== undefined) headers['x-forwarded-host'] = client.host;
    if (client.proto !== undefined) headers['x-forwarded-proto'] = client.proto;
    let response: Response;
    try {
      response = await fetch(url, { headers, signal: AbortSignal.timeout(CAPABILITIES_TIMEOUT_MS) });
    } catch (error) {
      throw new BadGateway(`MapProxy at ${this.mapproxyUrl} did not answer: ${String(error)}`, {
        clientMessage: 'the tile cache did not answer',
      });
    }
    const body = await response.text();
    if (response.status !== 200) {
      throw new BadGateway(
        `MapProxy answered ${url.pathname}${url.search} with ${response.status}: ${body.slice(0, 300)}`,
        {
          clientMessage: `the tile cache answered ${response.status}`,
        },
      );
    }
    return { contentType: response.headers.get('content-type') ?? 'application/xml', body };
  }
}
