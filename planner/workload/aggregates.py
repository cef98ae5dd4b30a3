"""Aggregate queries over one table: the shape an aggregate index can answer, recognised.

    SELECT l_returnflag, sum(l_extendedprice * l_discount) AS revenue, count(*)
    FROM tpch.lineitem
    WHERE l_shipdate >= DATE '1994-01-01' AND l_discount BETWEEN 0.05 AND 0.07
    GROUP BY l_returnflag
    [HAVING …] [ORDER BY …] [LIMIT n]

is one ``AggregateQuery``: its table, the grouping columns, and the aggregate calls
(``count(*)``, ``count(e)``, ``sum(e)``, ``avg(e)``, ``min(e)``, ``max(e)``) over *column
expressions* ``e`` (columns, numeric literals, ``+ - *``, unary minus, parentheses). The rest of
the SELECT (expressions over the aggregates and the grouping columns, HAVING, ORDER BY, LIMIT)
may be anything deterministic built from a short list of operators.

Anything else is refused with the reason: joins and several sources, DISTINCT or FILTER inside an
aggregate, window functions, grouping sets, subqueries, functions outside the list, a GROUP BY on
an expression. A refused query is answered by a plain scan: the aggregate index only ever takes
a query it can answer exactly (``planner.rewrite.aggregate_rewrite``).

Both advise (which aggregates are worth keeping) and the rewrite (which queries the index
answers) read queries through this one recogniser, so the index keeps what the rewrite asks for.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping

from sqlglot import exp

from planner.cnf.ir import Expr
from planner.semantics.coercion import arithmetic_types
from planner.semantics.constants import number_literal
from planner.semantics.types import SparkType, parse_type
from planner.workload.scans import Schema, iter_scans, table_name

FUNCTIONS = {exp.Count: "count", exp.Sum: "sum", exp.Avg: "avg", exp.Min: "min", exp.Max: "max"}
_ARITH = {exp.Add: "+", exp.Sub: "-", exp.Mul: "*"}
# what the SELECT, HAVING and ORDER BY may hold around the aggregates and grouping columns
_AROUND = (exp.Column, exp.Literal, exp.Paren, exp.Add, exp.Sub, exp.Mul, exp.Div, exp.Mod, exp.Neg, exp.Cast,
           exp.Alias, exp.EQ, exp.NEQ, exp.GT, exp.GTE, exp.LT, exp.LTE, exp.And, exp.Or, exp.Not, exp.Is,
           exp.Null, exp.Boolean, exp.Case, exp.If, exp.Coalesce, exp.DataType, exp.Identifier, exp.Ordered,
           exp.Star, exp.Tuple)
_PLAIN_TABLE_ARGS = {"this", "db", "catalog", "alias"}
_SELECT_ARGS_ALLOWED = {"expressions", "from_", "where", "group", "having", "order", "limit", "distinct",
                        "kind", "hint", "exclude", "operation_modifiers"}


@dataclass(frozen=True)
class AggregateCall:
    """One aggregate: ``function`` over the normalised expression ``key`` (None: ``count(*)``)."""

    function: str  # count | sum | avg | min | max
    key: str | None

    def describe(self) -> str:
        return f"{self.function}({'*' if self.key is None else self.key})"


@dataclass(frozen=True)
class AggregateQuery:
    table: str  # lower case, qualified with the current database when one is known
    alias: str  # the name the query reads the table by
    groups: tuple[str, ...]  # GROUP BY columns, lower case
    calls: tuple[AggregateCall, ...]  # each distinct call once
    predicate: Expr  # the WHERE clause, raw IR (planner.workload.scans)
    select: exp.Select = field(compare=False, hash=False, repr=False)
    node: exp.Table = field(compare=False, hash=False, repr=False)
    columns: frozenset[str] | None = None  # columns the query reads

    @property
    def exprs(self) -> tuple[str, ...]:
        """The expressions the calls aggregate, once each, in order."""
        return tuple(dict.fromkeys(c.key for c in self.calls if c.key is not None))


def expression_key(node: exp.Expression) -> str | None:
    """Normalised Spark SQL text of a column expression (qualifiers dropped, names lower case and
    quoted), or None when it is not one: ``l.L_EXTENDEDPRICE * (1 - l_discount)`` ->
    ``\\`l_extendedprice\\` * (1 - \\`l_discount\\`)``."""
    if not _column_expression(node):
        return None
    out = exp.Paren(this=node.copy())  # a root to replace a lone column under
    for c in list(out.find_all(exp.Column)):
        c.replace(exp.column(exp.to_identifier(c.name.lower(), quoted=True)))
    return out.this.sql(dialect="spark")


def _column_expression(node: exp.Expression) -> bool:
    if isinstance(node, exp.Column):
        return isinstance(node.this, exp.Identifier) and node.args.get("db") is None
    if isinstance(node, exp.Literal):
        return not node.is_string and number_literal(node.this) is not None
    if isinstance(node, (exp.Paren, exp.Neg)):
        return _column_expression(node.this)
    if type(node) in _ARITH:
        return _column_expression(node.this) and _column_expression(node.expression)
    return False


def expression_type(node: exp.Expression, types: Mapping[str, str]) -> SparkType | None:
    """The Spark type of a column expression (``expression_key`` accepts it), or None when the
    planner cannot say it exactly. A DECIMAL product whose precision Spark would have to cut
    (above 38 digits: what ``spark.sql.decimalOperations.allowPrecisionLoss`` decides) is None:
    its value would depend on a setting the index cannot see."""
    t, _ = _typed(node, {k.lower(): v for k, v in types.items()})
    return t


def _typed(node, types) -> tuple[SparkType | None, int | None]:
    """(type, the literal's integral value when the node is an integral literal)."""
    if isinstance(node, exp.Column):
        t = types.get(node.name.lower())
        return (parse_type(t) if t is not None else None), None
    if isinstance(node, exp.Literal):
        lit = number_literal(node.this)
        if lit is None:
            return None, None
        return lit.type, (lit.value if lit.type.is_integral else None)
    if isinstance(node, exp.Paren):
        return _typed(node.this, types)
    if isinstance(node, exp.Neg):
        t, v = _typed(node.this, types)
        return t, (-v if v is not None else None)
    op = _ARITH.get(type(node))
    if op is None:
        return None, None
    (a, av), (b, bv) = _typed(node.this, types), _typed(node.expression, types)
    if a is None or b is None or not (a.is_numeric and b.is_numeric):
        return None, None
    plans = {arithmetic_types(op, a, b, ansi, av, bv) for ansi in (True, False)}
    if len(plans) != 1 or None in plans:
        return None, None
    (ta, tb, result), = plans
    if result.is_decimal:
        pa, pb = ta[-1], tb[-1]
        if op == "*" and pa.precision + pb.precision + 1 > 38:
            return None, None
        if op in ("+", "-") and max(pa.precision - pa.scale, pb.precision - pb.scale) + max(pa.scale, pb.scale) + 1 > 38:
            return None, None
    return result, None


def result_type(function: str, arg: SparkType | None) -> SparkType | None:
    """What Spark's aggregate returns (``Sum``, ``Average``, ``Count``, ``Min``/``Max``)."""
    if function == "count":
        return parse_type("bigint")
    if arg is None:
        return None
    if function in ("min", "max"):
        return arg
    if not arg.is_numeric:
        return None
    if function == "sum":
        if arg.is_integral:
            return parse_type("bigint")
        if arg.is_decimal:
            return parse_type(f"decimal({min(38, arg.precision + 10)},{arg.scale})")
        return parse_type("double")
    if function == "avg":
        if arg.is_decimal:
            return parse_type(f"decimal({min(38, arg.precision + 4)},{min(38, arg.scale + 4)})")
        return parse_type("double")
    return None


def aggregate_calls(select: exp.Select) -> list[exp.AggFunc]:
    """The aggregate function nodes of ``select`` itself (not of its subqueries)."""
    out = []
    for node in select.find_all(exp.AggFunc):
        if node.find_ancestor(exp.Select) is select:
            out.append(node)
    return out


def aggregate_call(node: exp.AggFunc) -> AggregateCall | str:
    """The call ``node`` is, or why the aggregate index cannot answer it."""
    fn = FUNCTIONS.get(type(node))
    if fn is None:
        return f"aggregate {node.sql(dialect='spark')[:60]} is not one the index keeps (count, sum, avg, min, max)"
    if isinstance(node.parent, exp.Filter) or node.find_ancestor(exp.Window) is not None:
        return f"{node.sql(dialect='spark')[:60]} is filtered or windowed"
    arg = node.this
    if isinstance(arg, exp.Distinct) or node.args.get("distinct"):
        return f"{fn}(DISTINCT …) needs every value, not a sum per cell"
    if fn == "count":
        if isinstance(arg, exp.Star) or arg is None:
            return AggregateCall("count", None)
        if isinstance(arg, exp.Literal) and not arg.is_string and number_literal(arg.this) is not None:
            return AggregateCall("count", None)  # count(1): a non-NULL constant counts every row
    if len(node.expressions or []) > 0 and not isinstance(node, exp.Count):
        return f"{node.sql(dialect='spark')[:60]} has more than one argument"
    key = expression_key(arg) if arg is not None else None
    if key is None:
        return f"{fn}({(arg.sql(dialect='spark') if arg is not None else '')[:60]}) aggregates something other " \
               "than columns, numbers and + - *"
    return AggregateCall(fn, key)


def aggregate_query(tree: exp.Expression, schema: Schema, current_db: str | None = None,
                    dialect: str = "hive") -> AggregateQuery | str:
    """The aggregate query ``tree`` is, or why it is not one the index can answer."""
    if not isinstance(tree, exp.Select):
        return "not a single SELECT (a set operation, or a statement of another kind)"
    extra = [k for k, v in tree.args.items() if v and k not in _SELECT_ARGS_ALLOWED]
    if extra:
        return f"the SELECT has clauses the aggregate rewrite does not handle ({', '.join(sorted(extra))})"
    if tree.args.get("joins") or tree.args.get("laterals"):
        return "it joins several sources"
    from_ = tree.args.get("from_")
    if from_ is None or not isinstance(from_.this, exp.Table) or not from_.this.name:
        return "it does not read one table"
    node = from_.this
    if any(node.args.get(a) for a in set(node.args) - _PLAIN_TABLE_ARGS):
        return "the table reference has clauses (sample, hints, time travel)"
    if any(c.args.get("db") is not None for c in tree.find_all(exp.Column)):
        return "a column is qualified with its database"
    if any(tree.find_all(exp.Subquery, exp.Exists, exp.Window)) or \
            any(isinstance(i.args.get("query"), exp.Expression) for i in tree.find_all(exp.In)):
        return "it holds a subquery or a window function"
    group = tree.args.get("group")
    groups: list[str] = []
    if group is not None:
        if any(group.args.get(k) for k in ("grouping_sets", "cube", "rollup", "totals")):
            return "it groups by grouping sets, CUBE or ROLLUP"
        for g in group.expressions:
            col = _group_column(g, tree)
            if col is None:
                return f"it groups by {g.sql(dialect='spark')[:60]}, not by a column"
            groups.append(col)
    calls: dict[AggregateCall, None] = {}
    for agg in aggregate_calls(tree):
        got = aggregate_call(agg)
        if isinstance(got, str):
            return got
        calls[got] = None
    if not calls and not groups:
        return "it does not aggregate"
    for part in [*tree.expressions, tree.args.get("having"), tree.args.get("order")]:
        if part is None:
            continue
        bad = _outside(part, set(groups), tree)
        if bad:
            return bad
    table = table_name(node, current_db)
    sites = [s for s in iter_scans(tree, schema, current_db, dialect) if s.node is node]
    if len(sites) != 1:
        return "its scan could not be read"
    site = sites[0]
    return AggregateQuery(table, site.alias, tuple(dict.fromkeys(groups)), tuple(calls), site.predicate, tree, node,
                          site.columns)


def _group_column(g: exp.Expression, select: exp.Select) -> str | None:
    if isinstance(g, exp.Column) and isinstance(g.this, exp.Identifier):
        aliases = {e.alias.lower() for e in select.expressions if isinstance(e, exp.Alias)}
        name = g.name.lower()
        if name in aliases and not any(isinstance(e, exp.Alias) and e.alias.lower() == name and
                                       isinstance(e.this, exp.Column) and e.this.name.lower() == name
                                       for e in select.expressions):
            return None  # a SELECT alias of an expression: not a plain column
        return name
    if isinstance(g, exp.Literal) and g.is_int:
        i = int(g.this) - 1
        items = select.expressions
        if 0 <= i < len(items):
            item = items[i].this if isinstance(items[i], exp.Alias) else items[i]
            if isinstance(item, exp.Column) and isinstance(item.this, exp.Identifier):
                return item.name.lower()
    return None


def _outside(part: exp.Expression, groups: set[str], select: exp.Select) -> str:
    """Why ``part`` (a SELECT item, HAVING or ORDER BY) is not built from aggregates, grouping
    columns and the operators the rewrite keeps; '' when it is."""
    aliases = {e.alias.lower() for e in select.expressions if isinstance(e, exp.Alias)}
    stack = [part]
    while stack:
        n = stack.pop()
        if isinstance(n, exp.AggFunc):
            continue  # checked by aggregate_call
        if isinstance(n, exp.Order):
            stack.extend(n.expressions)
            continue
        if isinstance(n, exp.Having):
            stack.append(n.this)
            continue
        if not isinstance(n, _AROUND):
            return f"{n.sql(dialect='spark')[:60]} is not an operator the aggregate rewrite keeps"
        if isinstance(n, exp.Column):
            name = n.name.lower()
            if name not in groups and not (name in aliases and isinstance(part, (exp.Order, exp.Ordered))):
                return f"column {name} is read outside an aggregate without being grouped by"
            continue
        if isinstance(n, exp.Star):
            return "SELECT * in an aggregate query"
        stack.extend(c for c in n.iter_expressions())
    return ""


__all__ = ["AggregateCall", "AggregateQuery", "aggregate_query", "aggregate_call", "aggregate_calls", "expression_key",
           "expression_type", "result_type", "FUNCTIONS"]
