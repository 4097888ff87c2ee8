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
