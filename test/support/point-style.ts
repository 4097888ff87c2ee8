/** Point styles as QGIS Desktop 3.22 saves them, for the style upload tests. */

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
