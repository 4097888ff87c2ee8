#!/usr/bin/env python3
"""Writes the demo dataset `npm start` offers (data/demo): a made-up town near Toulouse, drawn
from coordinates in this file, so that nothing is downloaded. Usage: demo-data.py <folder>."""
import math
import os
import struct
import sys

from osgeo import gdal, ogr, osr

gdal.UseExceptions()

ORIGIN = (1.40, 43.58)  # lon, lat of the south-west corner
STEP = 0.02  # degrees per district


def srs_4326():
    srs = osr.SpatialReference()
    srs.ImportFromEPSG(4326)
    srs.SetAxisMappingStrategy(osr.OAMS_TRADITIONAL_GIS_ORDER)
    return srs


def town(path):
    driver = ogr.GetDriverByName("GPKG")
    dataset = driver.CreateDataSource(path)
    srs = srs_4326()
    districts = dataset.CreateLayer("districts", srs, ogr.wkbPolygon)
    districts.CreateField(ogr.FieldDefn("name", ogr.OFTString))
    districts.CreateField(ogr.FieldDefn("population", ogr.OFTInteger))
    names = ["Old Town", "Riverside", "Market", "Station", "Hill", "Gardens", "Mills", "Harbour", "Fields"]
    for index, name in enumerate(names):
        col, row = index % 3, index // 3
        x0, y0 = ORIGIN[0] + col * STEP, ORIGIN[1] + row * STEP
        ring = f"{x0} {y0},{x0 + STEP} {y0},{x0 + STEP} {y0 + STEP},{x0} {y0 + STEP},{x0} {y0}"
        feature = ogr.Feature(districts.GetLayerDefn())
        feature.SetField("name", name)
        feature.SetField("population", 1000 + 750 * index)
        feature.SetGeometry(ogr.CreateGeometryFromWkt(f"POLYGON(({ring}))"))
        districts.CreateFeature(feature)
    roads = dataset.CreateLayer("roads", srs, ogr.wkbLineString)
    roads.CreateField(ogr.FieldDefn("name", ogr.OFTString))
    size = 3 * STEP
    lines = {
        "Ring road": [(0, 0), (size, 0), (size, size), (0, size), (0, 0)],
        "High street": [(0, size / 2), (size, size / 2)],
        "Canal path": [(size / 2, 0), (size / 2, size)],
        "Diagonal": [(0, 0), (size, size)],
    }
    for name, points in lines.items():
        wkt = ",".join(f"{ORIGIN[0] + x} {ORIGIN[1] + y}" for x, y in points)
        feature = ogr.Feature(roads.GetLayerDefn())
        feature.SetField("name", name)
        feature.SetGeometry(ogr.CreateGeometryFromWkt(f"LINESTRING({wkt})"))
        roads.CreateFeature(feature)
    places = dataset.CreateLayer("places", srs, ogr.wkbPoint)
    places.CreateField(ogr.FieldDefn("name", ogr.OFTString))
    for index, name in enumerate(["Town hall", "Station", "School", "Library", "Market hall"]):
        angle = index * 2 * math.pi / 5
        x = ORIGIN[0] + size / 2 + math.cos(angle) * size / 4
        y = ORIGIN[1] + size / 2 + math.sin(angle) * size / 4
        feature = ogr.Feature(places.GetLayerDefn())
        feature.SetField("name", name)
        feature.SetGeometry(ogr.CreateGeometryFromWkt(f"POINT({x} {y})"))
        places.CreateFeature(feature)
    dataset = None


def elevation(path):
    """A hill in the middle of the town: a smooth Float32 surface, metres."""
    size = 120
    extent = 3 * STEP
    dataset = gdal.GetDriverByName("GTiff").Create(path, size, size, 1, gdal.GDT_Float32, ["COMPRESS=DEFLATE"])
    dataset.SetGeoTransform([ORIGIN[0], extent / size, 0, ORIGIN[1] + extent, 0, -extent / size])
    dataset.SetProjection(srs_4326().ExportToWkt())
    band = dataset.GetRasterBand(1)
    rows = []
    for row in range(size):
        for col in range(size):
            dx, dy = (col - size / 2) / size, (row - size / 2) / size
            rows.append(140 + 90 * math.exp(-(dx * dx + dy * dy) * 12) + 6 * math.sin(col / 7.0))
    band.WriteRaster(0, 0, size, size, struct.pack(f"{size * size}f", *rows))
    band.SetNoDataValue(-9999)
    dataset = None


def main():
    folder = sys.argv[1]
    os.makedirs(folder, exist_ok=True)
    for name, write in (("town.gpkg", town), ("elevation.tif", elevation)):
        path = os.path.join(folder, name)
        partial = path + ".partial" + os.path.splitext(name)[1]
        if os.path.exists(partial):
            os.remove(partial)
        write(partial)
        os.replace(partial, path)


main()
