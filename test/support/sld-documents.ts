/**
 * SLD documents as GeoServer users bring them, for the SLD upload tests: SLD 1.0 (`CssParameter`)
 * and SLD 1.1 with Symbology Encoding (`se:`, `SvgParameter`), over the fixtures' layers, whose
 * features are named `<layer>-<index>`.
 */

const SLD_10 =
  'version="1.0.0" xmlns="http://www.opengis.net/sld" xmlns:ogc="http://www.opengis.net/ogc" ' +
  'xmlns:xlink="http://www.w3.org/1999/xlink"';
const SLD_11 =
  'version="1.1.0" xmlns="http://www.opengis.net/sld" xmlns:se="http://www.opengis.net/se" ' +
  'xmlns:ogc="http://www.opengis.net/ogc" xmlns:xlink="http://www.w3.org/1999/xlink"';

/** An SLD 1.0 document of one named layer whose one style holds `rules`. */
function sld10(layer: string, rules: string): string {
  return `<?xml version="1.0" encoding="UTF-8"?>
<StyledLayerDescriptor ${SLD_10}>
  <NamedLayer>
    <Name>${layer}</Name>
    <UserStyle>
      <Name>${layer} style</Name>
      <FeatureTypeStyle>${rules}</FeatureTypeStyle>
    </UserStyle>
  </NamedLayer>
</StyledLayerDescriptor>
`;
}

/** An SLD 1.1 (SE) document of one named layer whose one style holds `rules`. */
function sld11(layer: string, rules: string): string {
  return `<?xml version="1.0" encoding="UTF-8"?>
<StyledLayerDescriptor ${SLD_11}>
  <NamedLayer>
    <se:Name>${layer}</se:Name>
    <UserStyle>
      <se:Name>${layer} style</se:Name>
      <se:FeatureTypeStyle>${rules}</se:FeatureTypeStyle>
    </UserStyle>
  </NamedLayer>
</StyledLayerDescriptor>
`;
}

function seMark(shape: string, fill: string, size: number): string {
  return `<se:PointSymbolizer><se:Graphic><se:Mark><se:WellKnownName>${shape}</se:WellKnownName>
    <se:Fill><se:SvgParameter name="fill">${fill}</se:SvgParameter></se:Fill></se:Mark>
    <se:Size>${size}</se:Size></se:Graphic></se:PointSymbolizer>`;
}

function fillRule(fill: string, scales = ''): string {
  return `<Rule>${scales}<PolygonSymbolizer><Fill><CssParameter name="fill">${fill}</CssParameter></Fill>
    </PolygonSymbolizer></Rule>`;
}

export interface SldCase {
  style: string;
  layer: 'points' | 'lines' | 'polygons';
  sld: string;
  /** Colours (`r,g,b`) the drawing must hold, and ones it must not. */
  drawn: string[];
  absent: string[];
  /**
   * QGIS's own Save as SLD of the style it read does not draw as the upload: a mark without a
   * stroke is written with an empty `<se:Stroke/>` (QGIS 3.22 once the style went through a QML,
   * which QGIS then reads as its default stroke), and a label's anchor point is written as a centre
   * and a displacement.
   */
  reshapedBySld?: true;
}

/** The vector styles: every one drawn by QGIS Server as PyQGIS draws it after loadSldStyle. */
export const VECTOR_SLDS: SldCase[] = [
  {
    style: 'simple-fill',
    layer: 'polygons',
    sld: sld10(
      'polygons',
      `<Rule><PolygonSymbolizer>
        <Fill><CssParameter name="fill">#3366cc</CssParameter></Fill>
        <Stroke><CssParameter name="stroke">#000000</CssParameter><CssParameter name="stroke-width">3</CssParameter></Stroke>
      </PolygonSymbolizer></Rule>`,
    ),
    drawn: ['51,102,204', '0,0,0'],
    absent: [],
  },
  {
    style: 'filtered-rules',
    reshapedBySld: true,
    layer: 'points',
    sld: sld11(
      'points',
      `<se:Rule><se:Name>first</se:Name>
        <ogc:Filter><ogc:PropertyIsEqualTo><ogc:PropertyName>name</ogc:PropertyName>
          <ogc:Literal>points-0</ogc:Literal></ogc:PropertyIsEqualTo></ogc:Filter>
        ${seMark('square', '#ff0000', 24)}
      </se:Rule>
      <se:Rule><se:Name>others</se:Name><se:ElseFilter/>${seMark('circle', '#0000ff', 16)}</se:Rule>`,
    ),
    drawn: ['255,0,0', '0,0,255'],
    absent: [],
  },
  {
    style: 'point-marks',
    reshapedBySld: true,
    layer: 'points',
    sld: sld10(
      'points',
      `<Rule><PointSymbolizer><Graphic><Mark><WellKnownName>star</WellKnownName>
        <Fill><CssParameter name="fill">#ffaa00</CssParameter></Fill>
        <Stroke><CssParameter name="stroke">#333333</CssParameter><CssParameter name="stroke-width">1</CssParameter></Stroke>
      </Mark><Size>30</Size><Rotation>15</Rotation></Graphic></PointSymbolizer>
      <PointSymbolizer><Graphic><Mark><WellKnownName>triangle</WellKnownName>
        <Fill><CssParameter name="fill">#00cc66</CssParameter></Fill></Mark><Size>10</Size></Graphic></PointSymbolizer></Rule>`,
    ),
    drawn: ['255,170,0', '0,204,102'],
    absent: [],
  },
  {
    style: 'dashed-line',
    layer: 'lines',
    sld: sld11(
      'lines',
      `<se:Rule><se:LineSymbolizer><se:Stroke>
        <se:SvgParameter name="stroke">#008800</se:SvgParameter>
        <se:SvgParameter name="stroke-width">4</se:SvgParameter>
        <se:SvgParameter name="stroke-dasharray">12 6</se:SvgParameter>
        <se:SvgParameter name="stroke-linecap">butt</se:SvgParameter>
      </se:Stroke></se:LineSymbolizer></se:Rule>`,
    ),
    drawn: ['0,136,0'],
    absent: [],
  },
  {
    style: 'labels',
    reshapedBySld: true,
    layer: 'points',
    sld: sld11(
      'points',
      `<se:Rule>${seMark('circle', '#888888', 8)}
        <se:TextSymbolizer>
          <se:Label><ogc:PropertyName>name</ogc:PropertyName></se:Label>
          <se:Font><se:SvgParameter name="font-family">DejaVu Sans</se:SvgParameter>
            <se:SvgParameter name="font-size">14</se:SvgParameter></se:Font>
          <se:LabelPlacement><se:PointPlacement><se:AnchorPoint><se:AnchorPointX>0</se:AnchorPointX>
            <se:AnchorPointY>0.5</se:AnchorPointY></se:AnchorPoint></se:PointPlacement></se:LabelPlacement>
          <se:Fill><se:SvgParameter name="fill">#c00000</se:SvgParameter></se:Fill>
        </se:TextSymbolizer>
      </se:Rule>`,
    ),
    drawn: ['136,136,136', '192,0,0'],
    absent: [],
  },
  {
    // The layer's map is drawn at about 1:2,000,000: the far rule draws, the near one does not.
    style: 'scales',
    layer: 'polygons',
    sld: sld10(
      'polygons',
      fillRule('#ff0000', '<MaxScaleDenominator>100000</MaxScaleDenominator>') +
        fillRule('#00aa00', '<MinScaleDenominator>100000</MinScaleDenominator>'),
    ),
    drawn: ['0,170,0'],
    absent: ['255,0,0'],
  },
];

/** A raster colour map as GeoServer writes one, for the classes raster (values 0, 1 and 2). */
export const RASTER_SLD = sld10(
  'classes',
  `<Rule><RasterSymbolizer><Opacity>1.0</Opacity><ColorMap type="values">
    <ColorMapEntry color="#ff0000" quantity="0"/>
    <ColorMapEntry color="#00ff00" quantity="1"/>
    <ColorMapEntry color="#0000ff" quantity="2"/>
  </ColorMap></RasterSymbolizer></Rule>`,
);

/** A polygon fill in another colour, to replace a style with. */
export const OTHER_FILL = sld10('polygons', fillRule('#aa00aa'));
