/** QGIS (PyQGIS) as the oracle of the <temporal> element Steward writes and reads. */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';

import { ProjectDocument } from '../src/qgis/project.js';
import { fixedInstantElement, instantDimension, utcInstant } from '../src/qgis/temporal.js';
import { firstChild, type XmlNode } from '../src/qgis/xml/node.js';
import { test } from './support/node-test.js';

const DATE_TIMES = [
  '2024-05-01T02:00:00+02:00',
  '1999-12-31T23:59:59Z',
  '2024-02-29T12:00:00-05:30',
  '2024-05-01T00:00:00',
];

// Each argument becomes a raster layer `t<index>` fixed at that date-time, written by QGIS itself.
const QGIS_WRITER = `
import os, shutil, sys, tempfile
from osgeo import gdal
from qgis.core import QgsApplication, QgsDateTimeRange, QgsProject, QgsRasterLayer, QgsRasterLayerTemporalProperties
from qgis.PyQt.QtCore import QDateTime, Qt
folder = tempfile.mkdtemp()
raster = os.path.join(folder, 'pixel.tif')
dataset = gdal.GetDriverByName('GTiff').Create(raster, 1, 1, 1)
dataset.SetGeoTransform([0, 1, 0, 1, 0, -1])
dataset = None
app = QgsApplication([], False)
app.initQgis()
for index, text in enumerate(sys.argv[1:]):
    layer = QgsRasterLayer(raster, f't{index}', 'gdal')
    properties = layer.temporalProperties()
    properties.setIsActive(True)
    properties.setMode(QgsRasterLayerTemporalProperties.ModeFixedTemporalRange)
    instant = QDateTime.fromString(text, Qt.ISODate)
    properties.setFixedTemporalRange(QgsDateTimeRange(instant, instant))
    QgsProject.instance().addMapLayer(layer)
QgsProject.instance().write(os.path.join(folder, 'project.qgs'))
print(open(os.path.join(folder, 'project.qgs'), encoding='utf-8').read())
shutil.rmtree(folder)
`;

function writtenByQgis(dateTimes: string[]): ProjectDocument {
  // Qt reads a date-time without a zone as local time; in UTC that is what Steward reads it as.
  const env = { ...process.env, QT_QPA_PLATFORM: 'offscreen', TZ: 'UTC' };
  const text = execFileSync('/usr/bin/python3', ['-c', QGIS_WRITER, ...dateTimes], {
    env,
    encoding: 'utf8',
    stdio: 'pipe',
  });
  return ProjectDocument.parse(text);
}

/** An element without its indentation, attributes in name order, for comparing structure. */
function shape(node: XmlNode): unknown {
  if (node.kind !== 'element') return node.kind === 'text' ? node.value : node.kind;
  const children = node.children.filter((child) => child.kind !== 'text' || child.value.trim() !== '');
  return { name: node.name, attributes: [...node.attributes].sort(), children: children.map(shape) };
}

test('QGIS writes the same <temporal> element and instant, and Steward reads what QGIS writes', () => {
  const project = writtenByQgis(DATE_TIMES);
  DATE_TIMES.forEach((dateTime, index) => {
    const instant = utcInstant(dateTime);
    assert.ok(instant, dateTime);
    const layer = project.mapLayerElement(`t${index}`);
    const temporal = layer && firstChild(layer, 'temporal');
    assert.ok(temporal, `QGIS wrote a <temporal> for ${dateTime}`);
    assert.deepEqual(shape(temporal), shape(fixedInstantElement(instant)), dateTime);
    assert.deepEqual(project.layer(`t${index}`)?.time, instantDimension(instant), dateTime);
  });
});
