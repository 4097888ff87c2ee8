/**
 * A web map service and a tile service on a loopback port, for layers of QGIS's `wms` provider:
 * XYZ tiles of one colour at `/tiles/{z}/{x}/{y}.png` and a WMS 1.3.0 of one layer, `world`, in
 * EPSG:4326, drawn in another colour at any size asked.
 */
import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import { type AddressInfo } from 'node:net';

import gdal from 'gdal-async';

export const TILE_COLOUR = [200, 30, 30] as const;
export const WMS_COLOUR = [30, 30, 200] as const;

/** A PNG of `width` x `height` pixels of one colour. */
function solidPng(width: number, height: number, colour: readonly number[]): Buffer {
  const memory = gdal.open('', 'w', 'MEM', width, height, 3, gdal.GDT_Byte);
  colour.forEach((value, index) =>
    memory.bands.get(index + 1).pixels.write(0, 0, width, height, new Uint8Array(width * height).fill(value)),
  );
  const path = `/vsimem/${randomUUID()}.png`;
  gdal.drivers.get('PNG').createCopy(path, memory).close();
  memory.close();
  const bytes = gdal.vsimem.release(path);
  return bytes;
}

function capabilities(base: string): string {
  return `<?xml version="1.0" encoding="UTF-8"?>
<WMS_Capabilities version="1.3.0" xmlns="http://www.opengis.net/wms" xmlns:xlink="http://www.w3.org/1999/xlink">
 <Service><Name>WMS</Name><Title>test service</Title><OnlineResource xlink:href="${base}"/></Service>
 <Capability>
  <Request>
   <GetCapabilities><Format>text/xml</Format><DCPType><HTTP><Get><OnlineResource xlink:href="${base}?"/></Get></HTTP></DCPType></GetCapabilities>
   <GetMap><Format>image/png</Format><DCPType><HTTP><Get><OnlineResource xlink:href="${base}?"/></Get></HTTP></DCPType></GetMap>
  </Request>
  <Exception><Format>XML</Format></Exception>
  <Layer>
   <Title>root</Title>
   <CRS>EPSG:4326</CRS>
   <EX_GeographicBoundingBox><westBoundLongitude>-180</westBoundLongitude><eastBoundLongitude>180</eastBoundLongitude><southBoundLatitude>-90</southBoundLatitude><northBoundLatitude>90</northBoundLatitude></EX_GeographicBoundingBox>
   <BoundingBox CRS="EPSG:4326" minx="-90" miny="-180" maxx="90" maxy="180"/>
   <Layer queryable="0">
    <Name>world</Name><Title>world</Title>
    <CRS>EPSG:4326</CRS>
    <EX_GeographicBoundingBox><westBoundLongitude>-180</westBoundLongitude><eastBoundLongitude>180</eastBoundLongitude><southBoundLatitude>-90</southBoundLatitude><northBoundLatitude>90</northBoundLatitude></EX_GeographicBoundingBox>
    <BoundingBox CRS="EPSG:4326" minx="-90" miny="-180" maxx="90" maxy="180"/>
   </Layer>
  </Layer>
 </Capability>
</WMS_Capabilities>`;
}

export interface WebServices {
  tileUrl: string;
  wmsUrl: string;
  /** Requests answered, by path. */
  requests: string[];
  stop(): Promise<void>;
}

export async function startWebServices(): Promise<WebServices> {
  const tile = solidPng(256, 256, TILE_COLOUR);
  const requests: string[] = [];
  let base = '';
  const server: Server = createServer((request, response) => {
    const url = new URL(request.url ?? '/', base);
    requests.push(url.pathname);
    const parameter = (name: string): string =>
      [...url.searchParams].find(([key]) => key.toUpperCase() === name)?.[1] ?? '';
    if (/^\/tiles\/\d+\/\d+\/\d+\.png$/.test(url.pathname)) {
      response.writeHead(200, { 'content-type': 'image/png' }).end(tile);
    } else if (url.pathname === '/wms' && parameter('REQUEST').toLowerCase() === 'getcapabilities') {
      response.writeHead(200, { 'content-type': 'text/xml' }).end(capabilities(`${base}/wms`));
    } else if (url.pathname === '/wms' && parameter('REQUEST').toLowerCase() === 'getmap') {
      const width = Math.min(Number(parameter('WIDTH')) || 256, 4096);
      const height = Math.min(Number(parameter('HEIGHT')) || 256, 4096);
      response.writeHead(200, { 'content-type': 'image/png' }).end(solidPng(width, height, WMS_COLOUR));
    } else {
      response.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    tileUrl: `${base}/tiles/{z}/{x}/{y}.png`,
    wmsUrl: `${base}/wms`,
    requests,
    stop: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
