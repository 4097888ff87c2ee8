/**
 * A project's descriptive metadata as QGIS keeps it: the title (the `<title>` element, the root's
 * `projectname` and `<projectMetadata><title>`, which `QgsProject::setTitle` keeps equal), the
 * abstract and author of `<projectMetadata>`, and the WMS service title and abstract of the project
 * properties, which QGIS Server prefers to the project's own in its capabilities.
 */
import { authidOf } from './crs.js';
import { type Layout } from './xml/layout.js';
import { childText, ensureChild, firstChild, path, setText, type XmlElement } from './xml/node.js';

export interface ProjectMetadata {
  title: string;
  abstract: string;
  author: string;
  creation: string;
  authid: string;
  wmsTitle: string;
  wmsAbstract: string;
}

/** The metadata an edit may change; absent fields stay as they are. */
export type MetadataChange = Partial<
  Pick<ProjectMetadata, 'title' | 'abstract' | 'author' | 'wmsTitle' | 'wmsAbstract'>
>;

export function readMetadata(root: XmlElement): ProjectMetadata {
  return {
    title: childText(root, 'title'),
    abstract: childText(root, 'projectMetadata', 'abstract'),
    author: childText(root, 'projectMetadata', 'author'),
    creation: childText(root, 'projectMetadata', 'creation'),
    authid: projectAuthid(root),
    wmsTitle: childText(root, 'properties', 'WMSServiceTitle'),
    wmsAbstract: childText(root, 'properties', 'WMSServiceAbstract'),
  };
}

/**
 * The project CRS's authority id, read where QGIS reads it: `<projectCrs>` (QGIS 3), else the
 * SpatialRefSys/ProjectCrs property QGIS 2 wrote (a USER: id names a CRS of that Desktop alone),
 * else the map canvas's CRS (`<mapcanvas><destinationsrs>`, which QGIS 2 drew the layers in).
 */
function projectAuthid(root: XmlElement): string {
  const own = authidOf(firstChild(root, 'projectCrs'));
  if (own !== '') return own;
  const property = childText(root, 'properties', 'SpatialRefSys', 'ProjectCrs');
  if (property !== '' && !/^USER:/i.test(property)) return property;
  return authidOf(path(root, 'mapcanvas', 'destinationsrs'));
}

/** Sets the text of `<name>` under `parent` (at `depth`), creating it when QGIS has not written it. */
function setChildText(parent: XmlElement, name: string, value: string, depth: number, layout: Layout): void {
  setText(ensureChild(parent, name, depth, layout), value);
}

/** A project property as `QgsProject::writeEntry` stores a string. */
function setProperty(root: XmlElement, name: string, value: string, layout: Layout): void {
  const property = ensureChild(ensureChild(root, 'properties', 0, layout), name, 1, layout);
  if (property.attributes.get('type') !== 'QString') property.attributes.set('type', 'QString');
  setText(property, value);
}

/**
 * Writes the change as `QgsProject` would, in the document's layout. The title goes where the
 * project keeps it: QGIS 2 projects have no `<projectMetadata>`, which only an abstract or an
 * author brings.
 */
export function writeMetadata(root: XmlElement, change: MetadataChange, layout: Layout): void {
  const metadata = (): XmlElement => ensureChild(root, 'projectMetadata', 0, layout);
  if (change.title !== undefined) {
    if (root.attributes.get('projectname') !== change.title) root.attributes.set('projectname', change.title);
    setChildText(root, 'title', change.title, 0, layout);
    const own = firstChild(root, 'projectMetadata');
    if (own) setChildText(own, 'title', change.title, 1, layout);
  }
  if (change.abstract !== undefined) setChildText(metadata(), 'abstract', change.abstract, 1, layout);
  if (change.author !== undefined) setChildText(metadata(), 'author', change.author, 1, layout);
  if (change.wmsTitle !== undefined) setProperty(root, 'WMSServiceTitle', change.wmsTitle, layout);
  if (change.wmsAbstract !== undefined) setProperty(root, 'WMSServiceAbstract', change.wmsAbstract, layout);
}
