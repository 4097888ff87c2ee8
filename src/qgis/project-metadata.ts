/**
 * A project's descriptive metadata as QGIS keeps it: the title (the `<title>` element, the root's
 * `projectname` and `<projectMetadata><title>`, which `QgsProject::setTitle` keeps equal), the
 * abstract and author of `<projectMetadata>`, and the WMS service title and abstract of the project
 * properties, which QGIS Server prefers to the project's own in its capabilities.
 */
import { authidOf } from './crs.js';
import { childText, ensureChild, firstChild, setText, type XmlElement } from './xml/node.js';

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
    authid: authidOf(firstChild(root, 'projectCrs')),
    wmsTitle: childText(root, 'properties', 'WMSServiceTitle'),
    wmsAbstract: childText(root, 'properties', 'WMSServiceAbstract'),
  };
}

/** Sets the text of `<name>` under `parent` (at `depth`), creating it when QGIS has not written it. */
function setChildText(parent: XmlElement, name: string, value: string, depth: number): void {
  setText(ensureChild(parent, name, depth), value);
}

/** A project property as `QgsProject::writeEntry` stores a string. */
function setProperty(root: XmlElement, name: string, value: string): void {
  const property = ensureChild(ensureChild(root, 'properties', 0), name, 1);
  property.attributes.set('type', 'QString');
  setText(property, value);
}

export function writeMetadata(root: XmlElement, change: MetadataChange): void {
  const metadata = (): XmlElement => ensureChild(root, 'projectMetadata', 0);
  if (change.title !== undefined) {
    root.attributes.set('projectname', change.title);
    setChildText(root, 'title', change.title, 0);
    setChildText(metadata(), 'title', change.title, 1);
  }
  if (change.abstract !== undefined) setChildText(metadata(), 'abstract', change.abstract, 1);
  if (change.author !== undefined) setChildText(metadata(), 'author', change.author, 1);
  if (change.wmsTitle !== undefined) setProperty(root, 'WMSServiceTitle', change.wmsTitle);
  if (change.wmsAbstract !== undefined) setProperty(root, 'WMSServiceAbstract', change.wmsAbstract);
}
