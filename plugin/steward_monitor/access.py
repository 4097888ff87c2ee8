"""Steward's roles enforced by QGIS Server: a QgsAccessControlFilter (docs/access.md, "QGIS Server").

Who a request comes from, and what the roles grant in its project, reach QGIS Server as the
`STEWARD_ACCESS` FastCGI parameter, which only nginx (after asking Steward, `auth_request`) and
Steward's own map requests set: no client header turns into a parameter of that name. Its value
is base64url of a JSON object compiled by Steward for the request's project (src/access/ows-rules.ts),
deflated (zlib), as QGIS Server converts the value to a Python string at each request:

    {"map": MAP value, "key": cache key, "write": bool,
     "layers": {name: {"read": false} | {"hidden": [attribute, ...], "filter": expression}}}

An empty or absent parameter means no restriction: access control is off, or an administrator
asks. The rules travel with each request, so a role changed in Steward applies to the next
request of every instance at once, and an instance needs nothing from the socket to enforce them.

The callbacks run on QGIS Server's main thread while it serves the request, where reading the
request's parameters (getEnv) is safe. Rules apply only to the project they were compiled for:
a request whose MAP is another one (a MAP in a POST body) is refused every layer. Stdlib only
apart from the filter's base class, so the rules are unit-tested without QGIS.
"""

from __future__ import annotations

import base64
import json
import zlib
from collections.abc import Callable
from typing import Any

PARAMETER = "STEWARD_ACCESS"


class Rules:
    """The compiled rules of one request; `NONE` refuses everything."""

    __slots__ = ("filters", "hidden", "key", "map", "refuse_all", "unreadable", "write")

    def __init__(
        self, data: dict[str, Any], refuse_all: bool = False, shorter: Callable[[str], str] = lambda text: text
    ) -> None:
        self.refuse_all = refuse_all
        self.map = str(data.get("map", ""))
        self.key = str(data.get("key", ""))
        self.write = data.get("write") is True
        self.unreadable: set[str] = set()
        self.hidden: dict[str, set[str]] = {}
        self.filters: dict[str, str] = {}
        layers = data.get("layers", {})
        for name, rule in (layers if isinstance(layers, dict) else {}).items():
            if not isinstance(rule, dict) or rule.get("read") is False:
                self.unreadable.add(name)
                continue
            hidden = rule.get("hidden", [])
            if hidden:
                self.hidden[name] = {str(attribute) for attribute in hidden}
            if isinstance(rule.get("filter"), str) and rule["filter"]:
                self.filters[name] = shorter(rule["filter"])

    def readable(self, layer: str) -> bool:
        return not self.refuse_all and layer not in self.unreadable


REFUSE_ALL = Rules({"key": "refused"}, refuse_all=True)


def parse(value: str, shorter: Callable[[str], str] = lambda text: text) -> Rules | None:
    """The rules a parameter's value holds, their filters written by `shorter`; None when it holds
    none (no restriction); REFUSE_ALL when it cannot be read, so that a damaged value never opens
    anything."""
    if not value:
        return None
    try:
        data = json.loads(zlib.decompress(base64.urlsafe_b64decode(value + "=" * (-len(value) % 4))))
    except (ValueError, zlib.error):
        return REFUSE_ALL
    return Rules(data, shorter=shorter) if isinstance(data, dict) else REFUSE_ALL


class RequestRules:
    """The rules of the request being served, parsed once per distinct parameter value: the
    values of the last KEPT role sets and projects asked about are kept, as the requests of
    several clients come in turn and parsing makes their filters shorter with QGIS's parser."""

    KEPT = 64

    def __init__(self, shorter: Callable[[str], str] = lambda text: text) -> None:
        self._shorter = shorter
        self._parsed: dict[str, Rules | None] = {}

    def of(self, value: str, map_value: str) -> Rules | None:
        parsed = self._parsed
        if value in parsed:
            rules = parsed[value]
        else:
            rules = parse(value, self._shorter)
            if len(parsed) >= self.KEPT:
                del parsed[next(iter(parsed))]
            parsed[value] = rules
        if rules is not None and rules is not REFUSE_ALL and rules.map != map_value:
            return REFUSE_ALL
        return rules
