"""A project file and the local files its layers read, packed as the bundle Steward publishes.

The bundle is the zip `PUT /api/projects/{project}/archive` takes (docs/publishing.md): the project
as `project.qgs` at its root and each folder of data files under `data/<folder>/`, the layers'
datasources rewritten to `./data/<folder>/<file>` and the project set to save relative paths, so
that Steward finds every file in the bundle wherever it lay on this machine. Plain functions, no
Qt: GDAL (osgeo) names the sidecars a dataset is read with.
"""

from __future__ import annotations

import os
import posixpath
import xml.etree.ElementTree as ET
import zipfile
from dataclasses import dataclass, field

FILE_PROVIDERS = frozenset({"ogr", "gdal"})
DOCTYPE = "<!DOCTYPE qgis PUBLIC 'http://mrcc.com/qgis.dtd' 'SYSTEM'>\n"
PROJECT_ENTRY = "project.qgs"


@dataclass
class Packed:
    """What a bundle holds: its data files by their entry name, and the layers left as they were."""

    files: dict[str, str] = field(default_factory=dict)
    kept: list[str] = field(default_factory=list)


def project_text(path: str) -> str:
    """The project's XML: the .qgs itself, or the .qgs inside a .qgz."""
    if path.lower().endswith(".qgz"):
        with zipfile.ZipFile(path) as archive:
            name = next(entry for entry in archive.namelist() if entry.lower().endswith(".qgs"))
            return archive.read(name).decode("utf-8")
    with open(path, encoding="utf-8") as file:
        return file.read()


def split_datasource(datasource: str) -> tuple[str, str]:
    """A file datasource's path and what follows it (`|layername=points`)."""
    path, bar, rest = datasource.partition("|")
    return path, bar + rest


def local_file(path: str, project_dir: str) -> str | None:
    """The absolute path of the file a datasource names on this machine, if it is a file there."""
    if path.startswith("file://"):
        path = path[len("file://") :]
    if path.startswith(("./", "../")):
        path = os.path.join(project_dir, path)
    path = os.path.normpath(path)
    return path if os.path.isabs(path) and os.path.isfile(path) else None


def dataset_files(path: str) -> list[str]:
    """The files GDAL reads the dataset at `path` from (a Shapefile's .shx, .dbf, .prj), it first."""
    try:
        from osgeo import gdal  # noqa: PLC0415 (GDAL is optional: without it the file alone goes)

        gdal.UseExceptions()
        dataset = gdal.OpenEx(path)
        listed = [name for name in (dataset.GetFileList() or []) if not name.startswith("/vsi")]
        dataset = None
    except (ImportError, RuntimeError):
        listed = []
    return [path, *(name for name in listed if os.path.normpath(name) != path and os.path.isfile(name))]


class _Folders:
    """The bundle folder (`data/<name>`) of each folder of this machine, one name each."""

    def __init__(self) -> None:
        self.names: dict[str, str] = {}

    def of(self, folder: str) -> str:
        if folder not in self.names:
            base = "data/" + (os.path.basename(folder) or "root")
            name, number = base, 2
            while name in self.names.values():
                name, number = f"{base}-{number}", number + 1
            self.names[folder] = name
        return self.names[folder]


def _child(parent: ET.Element, tag: str, attributes: dict[str, str] | None = None) -> ET.Element:
    """The element's child `tag`, added when it has none."""
    child = parent.find(tag)
    return child if child is not None else ET.SubElement(parent, tag, attributes or {})


def _relative_paths(root: ET.Element) -> None:
    """Sets the project to save relative paths, as the bundle's datasources are."""
    _child(_child(_child(root, "properties"), "Paths"), "Absolute", {"type": "bool"}).text = "false"


def rewrite(text: str, project_dir: str) -> tuple[str, Packed]:
    """The project with its local file layers pointed into the bundle, and the files to pack."""
    root = ET.fromstring(text)
    packed, folders = Packed(), _Folders()
    sources: dict[str, str] = {}
    for layer in root.iter("maplayer"):
        holder, provider = layer.find("datasource"), (layer.findtext("provider") or "").strip()
        if holder is None or provider not in FILE_PROVIDERS:
            continue
        path, rest = split_datasource(holder.text or "")
        found = local_file(path, project_dir)
        if found is None:
            packed.kept.append(layer.findtext("layername") or "")
            continue
        folder = folders.of(os.path.dirname(found))
        for file in dataset_files(found):
            packed.files[posixpath.join(folder, os.path.basename(file))] = file
        holder.text = f"./{folder}/{os.path.basename(found)}{rest}"
        sources[layer.findtext("id") or ""] = holder.text
    for node in root.iter("layer-tree-layer"):
        if node.get("id") in sources:
            node.set("source", sources[node.get("id") or ""])
    _relative_paths(root)
    return DOCTYPE + ET.tostring(root, encoding="unicode"), packed


def pack(project_path: str, bundle_path: str) -> Packed:
    """Writes the bundle of the project at `project_path` (.qgs or .qgz) to `bundle_path`."""
    text, packed = rewrite(project_text(project_path), os.path.dirname(os.path.abspath(project_path)))
    with zipfile.ZipFile(bundle_path, "w", zipfile.ZIP_DEFLATED, compresslevel=1) as bundle:
        bundle.writestr(PROJECT_ENTRY, text)
        for name, file in packed.files.items():
            bundle.write(file, name)
    return packed
