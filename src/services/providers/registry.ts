/**
 * The providers Steward knows, by QGIS provider key, and the one that takes a layer of any other
 * key (`wfs`, `arcgismapserver`, `vectortile`, ...): such a layer is valid as far as Steward can
 * tell, and QGIS Server's own answer in the project check says the rest.
 */
import { BadRequest } from '../../errors.js';
import { CONTROL_CHARACTER, maskPasswords } from '../../qgis/datasource-uri.js';
import { type LayerType } from '../../qgis/layer.js';
import { type DataRoots } from '../data-roots.js';
import { type LayerInspector } from '../layer-inspector.js';
import { PostgresProvider, SpatialiteProvider } from './databases.js';
import { DelimitedTextProvider } from './files-read-by-qgis.js';
import { GdalFileProvider } from './gdal-files.js';
import { UncheckedProvider, VirtualProvider } from './in-project.js';
import { type LayerMaker, type Provider } from './provider.js';
import { WebServiceProvider } from './web-services.js';

/** Refuses a datasource with a control character (NUL, a line break): QGIS Server cannot load the project. */
export function checkControlCharacters(datasource: string): void {
  if (CONTROL_CHARACTER.test(datasource)) {
    throw new BadRequest('a datasource may not hold control characters (NUL, line breaks, tabs)');
  }
}

export class ProviderRegistry {
  private readonly providers = new Map<string, Provider>();
  /** In the order a new layer's datasource is offered to them: the most specific first. */
  private readonly makers: LayerMaker[];

  /** Whether sources are confined to data folders. */
  readonly confining: boolean;

  constructor(dataRoots: DataRoots, inspector: LayerInspector) {
    this.confining = dataRoots.folders !== undefined;
    this.makers = [
      new SpatialiteProvider(inspector, dataRoots),
      new PostgresProvider(inspector),
      new GdalFileProvider('gdal', dataRoots, inspector),
      new GdalFileProvider('ogr', dataRoots, inspector),
    ];
    const others: Provider[] = [
      new UncheckedProvider('memory'),
      new VirtualProvider((key) => this.provider(key)),
      new DelimitedTextProvider(dataRoots),
      new WebServiceProvider(),
    ];
    for (const provider of [...this.makers, ...others]) this.providers.set(provider.key, provider);
  }

  /** The provider of a QGIS provider key; the fallback for a key Steward does not know. */
  provider(key: string): Provider {
    return this.providers.get(key) ?? new UncheckedProvider(key);
  }

  /** The provider a new layer's datasource is of; BadRequest for a control character in it. */
  maker(datasource: string, type: LayerType): LayerMaker {
    checkControlCharacters(datasource);
    const maker = this.makers.find((candidate) => candidate.claims(datasource, type));
    if (!maker) throw new BadRequest(`no provider takes a ${type} layer of datasource ${maskPasswords(datasource)}`);
    return maker;
  }
}
