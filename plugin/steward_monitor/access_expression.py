"""Shorter feature filters for QGIS Server to apply (access_filter.py).

A layer's filter joins the filters of the request's roles with OR (src/access/ows-rules.ts).
QGIS Server parses, prepares and compiles it to SQL for each map it draws, and SQLite parses
that: every term costs on every map. Once per set of rules, the filter is read with QGIS's own
parser and written again with its top-level OR terms each once, and the terms comparing one
column to a string (`"team" = 'a' OR "team" = 'b'`) merged into one `"team" IN ('a', 'b')`, which
is the same under SQL's and QGIS's NULL logic. A filter with nothing to merge is left as written.
"""

from __future__ import annotations

from qgis.core import QgsExpression, QgsExpressionNode, QgsExpressionNodeBinaryOperator

_OR = QgsExpressionNodeBinaryOperator.boOr
_EQ = QgsExpressionNodeBinaryOperator.boEQ


def _terms(node: QgsExpressionNode, terms: list[QgsExpressionNode]) -> None:
    if node.nodeType() == QgsExpressionNode.ntBinaryOperator and node.op() == _OR:
        _terms(node.opLeft(), terms)
        _terms(node.opRight(), terms)
    else:
        terms.append(node)


def _compared(node: QgsExpressionNode) -> tuple[str, str] | None:
    """The column and the string of `"column" = 'string'` (either way round); None otherwise."""
    if node.nodeType() != QgsExpressionNode.ntBinaryOperator or node.op() != _EQ:
        return None
    for column, literal in ((node.opLeft(), node.opRight()), (node.opRight(), node.opLeft())):
        if column.nodeType() == QgsExpressionNode.ntColumnRef and literal.nodeType() == QgsExpressionNode.ntLiteral:
            value = literal.value()
            if isinstance(value, str):
                return column.name(), value
    return None


def shorter_filter(expression: str) -> str:
    """`expression` with its OR terms each once and its equalities to strings merged by column."""
    parsed = QgsExpression(expression)
    root = parsed.rootNode()
    if parsed.hasParserError() or root is None:
        return expression  # QGIS Server refuses it alike
    terms: list[QgsExpressionNode] = []
    _terms(root, terms)
    # In the order first met: each term's text, or a column and its strings.
    parts: dict[str, list[str] | None] = {}
    for term in terms:
        compared = _compared(term)
        if compared is None:
            parts.setdefault(term.dump(), None)
            continue
        column, value = compared
        values = parts.setdefault("\0" + column, [])
        if values is not None and value not in values:
            values.append(value)
    if len(parts) == len(terms):
        return expression
    written = []
    for key, values in parts.items():
        if values is None:
            written.append(key)
        else:
            quoted = ", ".join(QgsExpression.quotedValue(value) for value in values)
            column = QgsExpression.quotedColumnRef(key[1:])
            written.append(f"{column} = {quoted}" if len(values) == 1 else f"{column} IN ({quoted})")
    return " OR ".join(f"({part})" for part in written)
