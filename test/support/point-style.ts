/** Point styles as QGIS Desktop 3.22 saves them, and packages of them, for the style upload tests. */
import { zipSync } from 'fflate';

/**
 * A single-symbol point style with simple labels in `labelFont`: `symbolLayer` is the `<layer>`
 * of its marker; the labels are drawn transparent, so that only the marker shows on a map.
 */
export function labelledPointQml(symbolLayer: string, labelFont: string): string {
  return `<!DOCTYPE qgis PUBLIC 'http://mrcc.com/qgis.dtd' 'SYSTEM'>
<qgis version="3.22.16-Białowieża" styleCategories="AllStyleCategories">
 <renderer-v2 type="singleSymbol" symbollevels="0" enableorderby="0" forceraster="0">
  <symbols>
   <symbol type="marker" name="0" alpha="1" clip_to_extent="1" force_rhr="0">
    ${symbolLayer}
   </symbol>
  </symbols>
 </renderer-v2>
 <labeling type="simple">
  <settings calloutType="simple">
   <text-style fontFamily="${labelFont}" fontSize="1" fieldName="'x'" isExpression="1" textColor="0,0,0,0"/>
  </settings>
 </labeling>
 <layerGeometryType>0</layerGeometryType>
</qgis>
`;
}

/** A style package: a zip of `files` (a QML and the images it names), by path in the archive. */
export function stylePackage(files: Record<string, string | Uint8Array>): Buffer {
  const entries = Object.entries(files).map(([name, content]) => [
    name,
    typeof content === 'string' ? new TextEncoder().encode(content) : content,
  ]);
  return Buffer.from(zipSync(Object.fromEntries(entries) as Record<string, Uint8Array>));
}

/** An SVG marker: a square filled with `colour` (r, g, b). */
export function squareSvg(colour: readonly number[]): string {
  return `<svg xmlns="http://www.w3.org/2000/svg" width="100" height="100" viewBox="0 0 100 100">
<rect x="0" y="0" width="100" height="100" fill="rgb(${colour.join(',')})"/></svg>`;
}

/** A point style as QGIS Desktop 3.22 saves it: an SVG marker named by the path it had there, and labels. */
export function svgMarkerQml(svgPath: string, labelFont: string): string {
  return labelledPointQml(
    `<layer class="SvgMarker" enabled="1" locked="0" pass="0">
     <Option type="Map">
      <Option type="QString" name="name" value="${svgPath}"/>
      <Option type="QString" name="size" value="10"/>
      <Option type="QString" name="size_unit" value="MM"/>
      <Option type="QString" name="color" value="255,0,0,255"/>
     </Option>
     <prop k="name" v="${svgPath}"/>
     <prop k="size" v="10"/>
     <prop k="size_unit" v="MM"/>
     <prop k="color" v="255,0,0,255"/>
    </layer>`,
    labelFont,
  );
}

/** A point style of circle markers with labels in `family`, as QGIS Desktop saves it. */
export function labelledCircleQml(family: string): string {
  return labelledPointQml(
    `<layer class="SimpleMarker" enabled="1" locked="0" pass="0">
     <Option type="Map"><Option type="QString" name="name" value="circle"/></Option>
     <prop k="name" v="circle"/>
    </layer>`,
    family,
  );
}
