/** Polygon styles as QGIS Desktop 3.22 saves them, for the tests of QML uploads given to a layer. */

/**
 * A categorized fill style classing by `attr`: each category's value filled in its colour (r, g,
 * b), without outline; with `labelField`, labels of that field, drawn transparent so that only the
 * fills show on a map.
 */
export function categorizedFillQml(
  attr: string,
  categories: ReadonlyArray<{ value: string; colour: readonly number[] }>,
  labelField?: string,
): string {
  const listed = categories
    .map(({ value }, index) => `   <category symbol="${index}" value="${value}" label="${value}" render="true"/>`)
    .join('\n');
  const symbols = categories
    .map(
      ({ colour }, index) => `   <symbol type="fill" name="${index}" alpha="1" clip_to_extent="1" force_rhr="0">
    <layer class="SimpleFill" enabled="1" locked="0" pass="0">
     <Option type="Map">
      <Option type="QString" name="color" value="${colour.join(',')},255"/>
      <Option type="QString" name="outline_style" value="no"/>
      <Option type="QString" name="style" value="solid"/>
     </Option>
     <prop k="color" v="${colour.join(',')},255"/>
     <prop k="outline_style" v="no"/>
     <prop k="style" v="solid"/>
    </layer>
   </symbol>`,
    )
    .join('\n');
  const labels =
    labelField === undefined
      ? ''
      : ` <labeling type="simple">
  <settings calloutType="simple">
   <text-style fontFamily="DejaVu Sans" fontSize="10" fieldName="${labelField}" isExpression="0" textColor="0,0,0,0"/>
  </settings>
 </labeling>
`;
  return `<!DOCTYPE qgis PUBLIC 'http://mrcc.com/qgis.dtd' 'SYSTEM'>
<qgis version="3.22.16-Białowieża" styleCategories="AllStyleCategories">
 <renderer-v2 type="categorizedSymbol" attr="${attr}" symbollevels="0" enableorderby="0" forceraster="0">
  <categories>
${listed}
  </categories>
  <symbols>
${symbols}
  </symbols>
 </renderer-v2>
${labels} <layerGeometryType>2</layerGeometryType>
</qgis>
`;
}
