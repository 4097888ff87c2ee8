import { existsSync } from 'node:fs';

import Database from 'better-sqlite3';
import gdal from 'gdal-async';

import { type CrsDefinition } from '../qgis/crs.js';

/** QGIS's own CRS table, which gives the internal `srsid` and names QGIS writes in projects. */
const QGIS_SRS_DB = ['/usr/share/qgis/resources/srs.db', '/usr/local/share/qgis/resources/srs.db'];

interface SrsRow {
  srs_id: number;
  description: string;
  projection_acronym: string;
  ellipsoid_acronym: string;
}

const northingFirstByAuthid = new Map<string, boolean>();

/** PROJ's database, where QGIS reads a CRS's area of use (`QgsCoordinateReferenceSystem::bounds`). */
const PROJ_DB = ['/usr/share/proj/proj.db', '/usr/local/share/proj/proj.db'];

type Box = [number, number, number, number];

let areaStatement: ((code: string) => Box | undefined) | undefined;

/** The area of use of `EPSG:<code>` in longitude/latitude (west, south, east, north), as PROJ has it. */
function lonLatArea(code: string): Box | undefined {
  if (!areaStatement) {
    const path = PROJ_DB.find((candidate) => existsSync(candidate));
    if (path === undefined) return undefined;
    const statement = new Database(path, { readonly: true, fileMustExist: true }).prepare<
      [string],
      { west_lon: number; south_lat: number; east_lon: number; north_lat: number }
    >(
      `SELECT e.west_lon, e.south_lat, e.east_lon, e.north_lat FROM usage u JOIN extent e
         ON u.extent_auth_name = e.auth_name AND u.extent_code = e.code
       WHERE u.object_auth_name = 'EPSG' AND u.object_code = ?
         AND u.object_table_name IN ('geodetic_crs', 'projected_crs', 'compound_crs')`,
    );
    areaStatement = (wanted) => {
      const row = statement.get(wanted);
      return row && [row.west_lon, row.south_lat, row.east_lon, row.north_lat];
    };
  }
  return areaStatement(code);
}

/** The points of a box's edges, for a transformation that bends them. */
function edgePoints([xmin, ymin, xmax, ymax]: Box, steps = 20): Array<[number, number]> {
  const points: Array<[number, number]> = [];
  for (let i = 0; i <= steps; i++) {
    const t = i / steps;
    const x = xmin + (xmax - xmin) * t;
    const y = ymin + (ymax - ymin) * t;
    points.push([x, ymin], [x, ymax], [xmin, y], [xmax, y]);
  }
  return points;
}

export class CrsResolver {
  private readonly cache = new Map<string, CrsDefinition>();
  private readonly lookup: ((authName: string, code: string) => SrsRow | undefined) | undefined;

  constructor(srsDbPath = QGIS_SRS_DB.find((candidate) => existsSync(candidate))) {
    if (srsDbPath === undefined) return;
    const db = new Database(srsDbPath, { readonly: true, fileMustExist: true });
    const statement = db.prepare<[string, string], SrsRow>(
      'SELECT srs_id, description, projection_acronym, ellipsoid_acronym FROM tbl_srs WHERE auth_name = ? AND auth_id = ?',
    );
    this.lookup = (authName, code) => statement.get(authName, code);
  }

  /** Resolves `EPSG:<code>`; undefined when GDAL does not know it. */
  fromAuthid(authid: string): CrsDefinition | undefined {
    const cached = this.cache.get(authid);
    if (cached) return cached;
    const [authName, code] = authid.split(':');
    if (authName !== 'EPSG' || code === undefined) return undefined;
    let srs: gdal.SpatialReference;
    try {
      srs = gdal.SpatialReference.fromEPSG(Number(code));
    } catch {
      return undefined;
    }
    const definition = this.describe(srs, authName, code);
    this.cache.set(authid, definition);
    return definition;
  }

  /** Resolves the CRS of a dataset; the authority id comes from GDAL's identification. */
  fromSpatialReference(srs: gdal.SpatialReference): CrsDefinition | undefined {
    const identified = srs.clone();
    if (!identified.getAuthorityCode(null)) {
      try {
        identified.autoIdentifyEPSG();
      } catch {
        // Left unidentified: handled below.
      }
    }
    const authName = identified.getAuthorityName(null);
    const code = identified.getAuthorityCode(null);
    if (authName && code)
      return this.fromAuthid(`${authName.toUpperCase()}:${code}`) ?? this.describe(srs, authName, code);
    return undefined;
  }

  private describe(srs: gdal.SpatialReference, authName: string, code: string): CrsDefinition {
    const row = this.lookup?.(authName, code);
    const geographic = srs.isGeographic();
    return {
      wkt: srs.toWKT(),
      proj4: srs.toProj4().trim(),
      srsid: row?.srs_id ?? 0,
      srid: Number(code),
      authid: `${authName}:${code}`,
      description: row?.description ?? srs.getAttrValue(geographic ? 'GEOGCS' : 'PROJCS') ?? '',
      projectionAcronym: row?.projection_acronym ?? /\+proj=(\S+)/.exec(srs.toProj4())?.[1] ?? '',
      ellipsoidAcronym: row?.ellipsoid_acronym ?? '',
      geographic,
    };
  }

  /**
   * The area the CRS is for, as QGIS bounds it, in its own coordinates, easting first; undefined
   * when PROJ tells none. Its longitudes and latitudes go through GDAL's EPSG axis order.
   */
  static areaOfUse(authid: string): Box | undefined {
    const [authName, code] = authid.split(':');
    if (authName !== 'EPSG' || code === undefined) return undefined;
    const area = lonLatArea(code);
    if (!area) return undefined;
    let target: gdal.SpatialReference;
    try {
      target = gdal.SpatialReference.fromEPSG(Number(code));
    } catch {
      return undefined;
    }
    if (target.isGeographic()) return area;
    const transform = new gdal.CoordinateTransformation(gdal.SpatialReference.fromEPSG(4326), target);
    const swapped = CrsResolver.northingFirst(authid);
    const xs: number[] = [];
    const ys: number[] = [];
    for (const [lon, lat] of edgePoints(area)) {
      try {
        const point = transform.transformPoint(lat, lon);
        if (!Number.isFinite(point.x) || !Number.isFinite(point.y)) continue;
        xs.push(swapped ? point.y : point.x);
        ys.push(swapped ? point.x : point.y);
      } catch {
        // A point outside the projection's domain: the others still bound the area.
      }
    }
    if (xs.length === 0) return undefined;
    return [Math.min(...xs), Math.min(...ys), Math.max(...xs), Math.max(...ys)];
  }

  /** True when WMS 1.3.0 wants this CRS's coordinates as latitude/northing first. */
  static northingFirst(authid: string): boolean {
    let answer = northingFirstByAuthid.get(authid);
    if (answer === undefined) {
      try {
        const srs = gdal.SpatialReference.fromEPSG(Number(authid.split(':')[1]));
        answer = srs.EPSGTreatsAsLatLong() || srs.EPSGTreatsAsNorthingEasting();
      } catch {
        answer = false;
      }
      northingFirstByAuthid.set(authid, answer);
    }
    return answer;
  }
}
