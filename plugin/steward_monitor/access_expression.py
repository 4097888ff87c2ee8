"""Shorter feature filters for QGIS Server to apply (access_filter.py).

A layer's filter joins the filters of the request's roles with OR (src/access/ows-rules.ts).
QGIS Server parses, prepares and compiles it to SQL for each map it draws, and SQLite parses
that: every term costs on every map. Once per set of rules, the filter is read with QGIS's own
parser and written again with its top-level OR terms each once, and:
- the terms comparing one column to a string (`"team" = 'a' OR "team" = 'b'`) merged into one
  `"team" IN ('a', 'b')`, which is the same under SQL's and QGIS's NULL logic;
- of the terms `"column" <> 'string'` of a text column of the layer (`text_columns`: QGIS
  compares its values to strings as strings, where 3.44 compares a boolean's truth), two kept
  when two of their strings are plain text (neither a number nor an interval to QGIS) that no
  collation takes for the same (`_distinct`): no value of the column equals both, so these two
  are true of every value but NULL, as the OR of all the column's terms is. The filter written
  is the original with OR terms left out: where a database compared otherwise than assumed, it
  would serve fewer features, never more.
The terms are joined two halves at a time (`_joined`). A filter of one or two terms with
nothing to merge is left as written.
"""

from __future__ import annotations

import unicodedata

from qgis.core import QgsExpression, QgsExpressionNode, QgsExpressionNodeBinaryOperator, QgsInterval
from qgis.PyQt.QtCore import QLocale

_OR = QgsExpressionNodeBinaryOperator.boOr
_EQ = QgsExpressionNodeBinaryOperator.boEQ
_NE = QgsExpressionNodeBinaryOperator.boNE
# The keys of `parts` in shorter_filter: a term's text, or one of these and a column.
_EQUAL_TO = "\0"
_OTHER_THAN = "\1"


def _terms(node: QgsExpressionNode, terms: list[QgsExpressionNode]) -> None:
    if node.nodeType() == QgsExpressionNode.ntBinaryOperator and node.op() == _OR:
        _terms(node.opLeft(), terms)
        _terms(node.opRight(), terms)
    else:
        terms.append(node)


def _compared(node: QgsExpressionNode) -> tuple[int, str, str] | None:
    """The operator (= or <>), column and string of `"column" = 'string'` or `<>` (either way
    round); None otherwise."""
    if node.nodeType() != QgsExpressionNode.ntBinaryOperator or node.op() not in (_EQ, _NE):
        return None
    for column, literal in ((node.opLeft(), node.opRight()), (node.opRight(), node.opLeft())):
        if column.nodeType() == QgsExpressionNode.ntColumnRef and literal.nodeType() == QgsExpressionNode.ntLiteral:
            value = literal.value()
            if isinstance(value, str):
                return node.op(), column.name(), value
    return None


def _text_key(value: str) -> str | None:
    """What of `value` any collation compares (its letters and digits, without case, accents or
    width); None when QGIS compares it as a number or an interval, or it has none."""
    if QLocale.c().toDouble(value)[1] or QgsInterval.fromString(value).isValid():
        return None
    try:
        float(value)
        return None
    except ValueError:
        pass
    folded = unicodedata.normalize("NFKD", value).casefold()
    key = "".join(char for char in folded if char.isalnum())
    return key or None


def _distinct(values: list[str]) -> list[str] | None:
    """Two of `values` no value can equal both of, in QGIS or in a database; None if none."""
    chosen: dict[str, str] = {}
    for value in values:
        key = _text_key(value)
        if key is not None and key not in chosen:
            chosen[key] = value
            if len(chosen) == 2:
                return list(chosen.values())
    return None


def _written(key: str, values: list[str] | None, text_columns: frozenset[str]) -> list[str]:
    """The terms written for one of shorter_filter's parts."""
    if values is None:
        return [key]
    column = QgsExpression.quotedColumnRef(key[1:])
    if key[0] == _OTHER_THAN:
        kept = (_distinct(values) if key[1:] in text_columns else None) or values
        return [f"{column} <> {QgsExpression.quotedValue(value)}" for value in kept]
    quoted = ", ".join(QgsExpression.quotedValue(value) for value in values)
    return [f"{column} = {quoted}" if len(values) == 1 else f"{column} IN ({quoted})"]


def shorter_filter(expression: str, text_columns: frozenset[str] = frozenset()) -> str:
    """`expression` with its OR terms each once, its equalities to strings merged by column, and the
    inequalities to strings of each of `text_columns` down to two where that is the same filter."""
    parsed = QgsExpression(expression)
    root = parsed.rootNode()
    if parsed.hasParserError() or root is None:
        return expression  # QGIS Server refuses it alike
    terms: list[QgsExpressionNode] = []
    _terms(root, terms)
    # In the order first met: each term's text, or an operator and a column, and its strings.
    parts: dict[str, list[str] | None] = {}
    for term in terms:
        compared = _compared(term)
        if compared is None:
            parts.setdefault(term.dump(), None)
            continue
        operator, column, value = compared
        values = parts.setdefault((_EQUAL_TO if operator == _EQ else _OTHER_THAN) + column, [])
        if values is not None and value not in values:
            values.append(value)
    written = [term for key, values in parts.items() for term in _written(key, values, text_columns)]
    if len(written) == len(terms) <= 2:
        return expression
    return _joined(written)


def _joined(terms: list[str]) -> str:
    """`terms` joined by OR two halves at a time: QGIS compiles each OR to SQL in parentheses of
    its own, and SQLite's parser fails on some hundred nested ones (GeoPackages then draw no
    feature), where halves nest them as deep as the log of the terms."""
    middle = len(terms) // 2
    if middle == 0:
        return f"({terms[0]})"
    halves = (terms[:middle], terms[middle:])
    return " OR ".join(_joined(half) if len(half) == 1 else f"({_joined(half)})" for half in halves)
