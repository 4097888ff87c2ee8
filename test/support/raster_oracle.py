"""Reference answers for the raster processing tests, from numpy and GDAL's Python bindings.

Reads one JSON request on stdin, {"command": ..., ...}, and writes one JSON answer on stdout.
"""
import json
import sys

import numpy as np
from osgeo import gdal

gdal.UseExceptions()


def valid_mask(nodata, array):
    mask = np.ones(array.shape, dtype=bool)
    if nodata is not None:
        mask &= array != nodata
    if array.dtype.kind == "f":
        mask &= ~np.isnan(array)
    return mask


def histogram(request):
    """numpy.histogram of the valid pixels of each band, on the pixels' own dtype."""
    dataset = gdal.Open(request["path"])
    answer = {}
    for index in range(1, dataset.RasterCount + 1):
        band = dataset.GetRasterBand(index)
        array = band.ReadAsArray()
        valid = array[valid_mask(band.GetNoDataValue(), array)]
        low, high = request.get("min"), request.get("max")
        if low is None and high is None:
            span = None
        else:
            span = (low if low is not None else valid.min(), high if high is not None else valid.max())
        counts, edges = np.histogram(valid, bins=request.get("count", 1000), range=span)
        answer[str(index)] = {"min": float(edges[0]), "max": float(edges[-1]), "values": counts.tolist()}
    return answer


def gdal_histogram(request):
    """GDAL's own exact histogram (values equal to max are left out, unlike numpy)."""
    dataset = gdal.Open(request["path"])
    return {
        str(index): dataset.GetRasterBand(index).GetHistogram(
            request["min"], request["max"], request["count"], include_out_of_range=0, approx_ok=0
        )
        for index in range(1, dataset.RasterCount + 1)
    }


def read_band(path, number=1):
    """The band's no-data value and pixels (the dataset must outlive its band in these bindings)."""
    dataset = gdal.Open(path)
    band = dataset.GetRasterBand(number)
    return band.GetNoDataValue(), band.ReadAsArray(), [band.GetOverview(i).ReadAsArray() for i in range(band.GetOverviewCount())[:1]]


def compare_calc(request):
    """Compares our output with gdal_calc.py's: same no-data pixels, values within tolerance."""
    nodata = request["nodata"]
    _, ours, _ = read_band(request["ours"])
    _, theirs, _ = read_band(request["theirs"])
    expected_nodata = ~np.isfinite(theirs) | (theirs == nodata)
    for source in request["inputs"]:
        source_nodata, array, _ = read_band(source["path"], source["band"])
        expected_nodata |= ~valid_mask(source_nodata, array)
    ours_nodata = ours == nodata
    valid = ~expected_nodata
    values = theirs[valid].astype(np.float64)
    span = float(values.max() - values.min()) if values.size else 0.0
    diff = np.abs(ours[valid].astype(np.float64) - values)
    return {
        "shape_equal": ours.shape == theirs.shape,
        "nodata_mismatches": int(np.count_nonzero(ours_nodata != expected_nodata)),
        "valid": int(values.size),
        "nodata": int(np.count_nonzero(expected_nodata)),
        "max_diff": float(diff.max()) if diff.size else 0.0,
        "span": span,
    }


def overview_check(request):
    """The first overview against the mean of the valid pixels of each 2 x 2 block."""
    nodata, array, overviews = read_band(request["path"])
    overview = overviews[0]
    data = array.astype(np.float64)
    valid = data != nodata
    height, width = data.shape
    pad = np.zeros((height + height % 2, width + width % 2))
    count = pad.copy()
    pad[:height, :width] = np.where(valid, data, 0)
    count[:height, :width] = valid
    sums = pad.reshape(pad.shape[0] // 2, 2, pad.shape[1] // 2, 2).sum(axis=(1, 3))
    counts = count.reshape(count.shape[0] // 2, 2, count.shape[1] // 2, 2).sum(axis=(1, 3))
    with np.errstate(invalid="ignore", divide="ignore"):
        expected = np.where(counts > 0, sums / counts, nodata).astype(np.float32)
    return {
        "shape": list(overview.shape),
        "expected_shape": list(expected.shape),
        "nodata_mismatches": int(np.count_nonzero((overview == nodata) != (expected == nodata))),
        "max_diff": float(np.abs(np.where(expected == nodata, 0, overview.astype(np.float64) - expected)).max()),
    }


COMMANDS = {
    "histogram": histogram,
    "gdal-histogram": gdal_histogram,
    "compare-calc": compare_calc,
    "overview-check": overview_check,
}

if __name__ == "__main__":
    query = json.load(sys.stdin)
    json.dump(COMMANDS[query["command"]](query), sys.stdout)
