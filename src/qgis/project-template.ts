import { type CrsDefinition, spatialRefSysElement } from './crs.js';
import { path, replaceChild, setText, type XmlDocument } from './xml/node.js';
import { parseXml } from './xml/parse.js';

export const QGIS_FORMAT_VERSION = '3.22.16-Białowieża';

export interface NewProject {
  title: string;
  author: string;
  /** Local date-time `YYYY-MM-DDTHH:MM:SS`. */
  creation: string;
  crs: CrsDefinition;
}

/** The skeleton of an empty project in the element order QGIS 3.22 writes. */
const EMPTY_PROJECT = `<!DOCTYPE qgis PUBLIC 'http://mrcc.com/qgis.dtd' 'SYSTEM'>
<qgis projectname="" version="${QGIS_FORMAT_VERSION}" saveDateTime="" saveUser="steward" saveUserFull="Steward">
  <homePath path=""/>
  <title></title>
  <autotransaction active="0"/>
  <evaluateDefaultValues active="0"/>
  <trust active="0"/>
  <projectCrs>
    <spatialrefsys/>
  </projectCrs>
  <layer-tree-group>
    <customproperties>
      <Option/>
    </customproperties>
    <custom-order enabled="0"/>
  </layer-tree-group>
  <snapping-settings intersection-snapping="0" tolerance="12" maxScale="0" enabled="0" scaleDependencyMode="0" unit="1" mode="2" self-snapping="0" type="1" minScale="0">
    <individual-layer-settings/>
  </snapping-settings>
  <relations/>
  <polymorphicRelations/>
  <projectlayers/>
  <layerorder/>
  <properties>
    <Paths>
      <Absolute type="bool">true</Absolute>
    </Paths>
    <SpatialRefSys>
      <ProjectionsEnabled type="int">1</ProjectionsEnabled>
    </SpatialRefSys>
    <WMSServiceCapabilities type="bool">true</WMSServiceCapabilities>
    <WMSServiceTitle type="QString"></WMSServiceTitle>
  </properties>
  <visibility-presets/>
  <transformContext/>
  <projectMetadata>
    <identifier></identifier>
    <parentidentifier></parentidentifier>
    <language></language>
    <type></type>
    <title></title>
    <abstract></abstract>
    <links/>
    <author></author>
    <creation></creation>
  </projectMetadata>
  <Annotations/>
  <Layouts/>
  <Bookmarks/>
  <ProjectViewSettings rotation="0" UseProjectScales="0">
    <Scales/>
  </ProjectViewSettings>
  <ProjectTimeSettings timeStep="1" frameRate="1" timeStepUnit="h" cumulativeTemporalRange="0"/>
</qgis>
`;

export function emptyProject(project: NewProject): XmlDocument {
  const document = parseXml(EMPTY_PROJECT);
  const { root } = document;
  root.attributes.set('projectname', project.title);
  root.attributes.set('saveDateTime', project.creation);
  const fill = (value: string, ...names: string[]): void => {
    const target = path(root, ...names);
    if (!target) throw new Error(`the project template has no ${names.join('/')}`);
    setText(target, value);
  };
  fill(project.title, 'title');
  fill(project.title, 'properties', 'WMSServiceTitle');
  fill(project.title, 'projectMetadata', 'title');
  fill(project.author, 'projectMetadata', 'author');
  fill(project.creation, 'projectMetadata', 'creation');
  const crsContainer = path(root, 'projectCrs');
  const placeholder = crsContainer && path(crsContainer, 'spatialrefsys');
  if (!crsContainer || !placeholder) throw new Error('the project template has no projectCrs');
  replaceChild(crsContainer, placeholder, spatialRefSysElement(project.crs));
  return document;
}
