"""Hidden attributes left out of WFS DescribeFeatureType's schema.

QGIS Server (3.22 to 3.44) writes every field of a layer into the schema without asking the access
control's authorizedLayerAttributes, so the names of attributes a role hides would leak there
while GetFeature leaves their values out. The plugin's server filter hands each complete
DescribeFeatureType answer to the access filter's `trim_schema`, on the main thread, before it is
sent, where the request's rules are read as in its other hooks. Stdlib only: tested without QGIS.

The schema is QDom's output: one `<complexType name="{type name}Type">` a layer, whose attributes are
self-closing `<element name="..." .../>` (attributes in any order). They are removed as text, so
that every namespace declaration and prefix of the document stays as QGIS Server wrote it.
"""

from __future__ import annotations

import re
from xml.sax.saxutils import quoteattr


def _xml_name(name: str) -> str:
    """A layer's or field's name as QGIS Server writes it into the schema (spaces as underscores)."""
    return name.replace(" ", "_")


def _without_elements(block: str, names: set[str]) -> str:
    for name in names:
        block = re.sub(rf"<element\b[^>]*\bname={re.escape(quoteattr(_xml_name(name)))}[^>]*/>", "", block)
    return block


def without_hidden(schema: str, hidden: dict[str, set[str]]) -> str:
    """`schema` without the attributes `hidden` names, by layer name."""
    for layer, names in hidden.items():
        start = re.escape(f"<complexType name={quoteattr(_xml_name(layer) + 'Type')}")
        schema = re.sub(
            rf"{start}.*?</complexType>",
            lambda found, hidden_here=names: _without_elements(found.group(0), hidden_here),
            schema,
            flags=re.S,
        )
    return schema
