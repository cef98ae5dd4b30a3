"""Random constant SQL expressions over literals of every type, for the differential test.

``ExpressionGenerator(seed).expression()`` returns Spark SQL text such as

    CAST('1.00499999999999999999' AS DOUBLE) >= CAST(1.005 AS DECIMAL(15,3))
    (2147483647 + 1L) div -3
    TIMESTAMP '2020-03-08 02:30:00' < CAST(DATE '2020-03-08' AS TIMESTAMP)

The literals lean on the places where type models go wrong: decimal rounding boundaries and the
38-digit cap, float vs double, NaN and -0.0, integer overflow at every width, strings that are
almost numbers or dates, DST gaps and overlaps, and CHAR/VARCHAR casts. The text avoids spellings
sqlglot and Spark read differently (backslash escapes), so both read the same expression.
"""
from __future__ import annotations

import random

from sqlglot import exp

INT_VALUES = [0, 1, -1, 2, 3, 5, 7, 10, 12, 100, 127, 128, -128, -129, 255, 32767, 32768, -32768, 65535,
              2147483647, -2147483648, 2147483648, 4294967296, 9007199254740993, 9223372036854775807,
              -9223372036854775808, 123456789]
DECIMAL_TEXTS = ["1.005", "0.1", "0.125", "1.5", "-2.5", "2.5", "0.001", "99999999.99", "1.00", "0.333333",
                 "12345678901234567890.123456789", "0.30000000000000004", "1.0", "100.5", "-0.0", "3.14159",
                 "99999999999999999999999999999999999999", "9999999999999999999999999999.9999999999",
                 "0.0000000000000000000000000000000000001", "1234567.891", "0.5", "2.9999999999999999999",
                 "1.2345678901234567", "16777217.0", "9007199254740993.0"]
DOUBLE_TEXTS = ["1e0", "0.1e0", "1.5D", "1e300", "-1e-300", "2.5e15", "1.7976931348623157e308", "4.9e-324",
                "0.3e0", "1.0000000000000002e0", "9007199254740993e0", "3.0E-5", "123456.789e3", "0.5D", "1e-7"]
FLOAT_TEXTS = ["0.1F", "1.5F", "16777217F", "3.4028235e38F", "1.4e-45F", "0.3F", "-2.5F", "100.0F"]
STRINGS = ["5", " 5 ", "5.5", "-5", "+7", "1.005", "1e3", "1.5d", "abc", "", " ", "NaN", "inf", "-Infinity",
           "2020-01-05", "2020-1-5", "2020-01-05 10:00:00", "2020-01-05T10:00", "2020-01-05 xyz", "2020",
           "2020-02-30", "true", "yes", "0", "1", "0.1", "-0", "1.00499999999999999999", "99999999999999999999",
           "2147483648", "12:00", "2020-03-08 02:30:00", "2020-11-01 01:30:00.5", "2020-01-05 10:00:00Z",
           "2020-01-05 10:00:00+05:30", "1.5e400", "0x10", "ab", "ab   ", "a", "9.99", "2020-01-01 00:00:00"]
DATES = ["2020-01-01", "2020-01-31", "2020-02-29", "2020-03-08", "2020-11-01", "1999-12-31", "2100-02-28",
         "1970-01-01", "2020-12-31", "1992-01-02"]
STAMPS = ["2020-01-01 00:00:00", "2020-03-08 02:30:00", "2020-11-01 01:30:00", "2020-03-29 02:30:00",
          "2019-12-31 23:59:59.999999", "2020-01-05 10:00:00.5", "1970-01-01 00:00:00", "2020-06-15 12:34:56",
          "2020-10-25 02:30:00", "2020-01-01 00:00:00+09:00", "2020-01-01 00:00:00Z"]
TYPES = ["TINYINT", "SMALLINT", "INT", "BIGINT", "FLOAT", "DOUBLE", "DECIMAL(15,2)", "DECIMAL(38,18)",
         "DECIMAL(15,6)", "DECIMAL(3,2)", "DECIMAL(10,0)", "DECIMAL(38,0)", "DECIMAL(5,5)", "STRING", "DATE",
         "TIMESTAMP", "BOOLEAN", "CHAR(5)", "VARCHAR(3)"]
COMPARISONS = ["=", "<>", "<", "<=", ">", ">="]
ARITHMETIC = ["+", "-", "*", "/", "%", "div"]


def string_literal(text: str) -> str:
    return exp.Literal.string(text).sql(dialect="spark")


class ExpressionGenerator:
    def __init__(self, seed: int):
        self.rng = random.Random(seed)

    def pick(self, options):
        return self.rng.choice(options)

    # ---- typed expressions ---------------------------------------------------------------------
    def number(self, depth: int = 0) -> str:
        shape = self.rng.randrange(9 if depth < 2 else 2)
        if shape == 0:
            return self.pick([self.literal_int, self.literal_decimal, self.literal_decimal, self.literal_double])()
        if shape == 1:
            return self.pick([self.literal_int, self.literal_decimal, self.literal_double, self.literal_float])()
        if shape in (2, 3):
            to = self.pick([t for t in TYPES if t not in ("STRING", "DATE", "TIMESTAMP", "BOOLEAN", "CHAR(5)",
                                                           "VARCHAR(3)")])
            src = self.pick([self.number, self.number, self.string_number])(depth + 1)
            return f"{self.pick(['CAST', 'CAST', 'CAST', 'TRY_CAST'])}({src} AS {to})"
        if shape <= 6:
            op = self.pick(ARITHMETIC if self.rng.random() < 0.3 else ["+", "-", "*", "/", "%"])
            right = self.string_number(depth + 1) if self.rng.random() < 0.1 else self.number(depth + 1)
            return f"({self.number(depth + 1)} {op} {right})"
        if shape == 7:
            return f"(- {self.number(depth + 1)})"
        return self.pick(["CAST(NULL AS INT)", "CAST(NULL AS DECIMAL(10,2))", "NULL", "CAST(NULL AS DOUBLE)"])

    def literal_int(self) -> str:
        if self.rng.random() < 0.2:
            v, suffix = self.pick([(5, "Y"), (-128, "Y"), (127, "Y"), (300, "S"), (-32768, "S"), (7, "L"),
                                   (2147483648, "L"), (0, "L")])
            return f"({v}{suffix})" if v < 0 else f"{v}{suffix}"
        v = self.pick(INT_VALUES)
        return f"({v})" if v < 0 else str(v)

    def literal_decimal(self) -> str:
        t = self.pick(DECIMAL_TEXTS)
        if self.rng.random() < 0.3:
            digits = "".join(self.pick("0123456789") for _ in range(self.rng.randrange(1, 20)))
            point = self.rng.randrange(len(digits) + 1)
            t = (digits[:point] or "0") + "." + (digits[point:] or "0")
        return f"({t})" if t.startswith("-") else (t + "BD" if self.rng.random() < 0.1 else t)

    def literal_double(self) -> str:
        t = self.pick(DOUBLE_TEXTS)
        if self.rng.random() < 0.3:
            t = format(self.rng.uniform(-1000, 1000), f".{self.rng.randrange(0, 17)}e")  # e.g. -5.123e+02
        return f"({t})" if t.startswith("-") else self.pick([t, t, "CAST('NaN' AS DOUBLE)", "-0.0D",
                                                            "CAST('-0.0' AS DOUBLE)", "CAST('Infinity' AS DOUBLE)"])

    def literal_float(self) -> str:
        return self.pick(FLOAT_TEXTS + ["CAST('NaN' AS FLOAT)", f"CAST({self.literal_decimal()} AS FLOAT)"])

    def string_number(self, depth: int = 0) -> str:
        return string_literal(self.pick(["5", " 5 ", "5.5", "-5", "+7", "1.005", "1e3", "1.5d", "abc", "NaN", "inf",
                                         "0", "1", "0.1", "-0", "1.00499999999999999999", "99999999999999999999",
                                         "2147483648", "9.99", "", "0.30000000000000004", "1.5e400", "0x10",
                                         f"{self.rng.uniform(-100, 100):.{self.rng.randrange(1, 18)}f}"]))

    def string(self, depth: int = 0) -> str:
        shape = self.rng.randrange(4 if depth < 2 else 1)
        if shape == 0:
            return string_literal(self.pick(STRINGS))
        src = self.pick([self.number, self.date, self.timestamp, self.boolean])(depth + 1)
        return f"CAST({src} AS {self.pick(['STRING', 'CHAR(5)', 'VARCHAR(3)'])})"

    def date(self, depth: int = 0) -> str:
        d = f"DATE '{self.pick(DATES)}'"
        shape = self.rng.randrange(6 if depth < 2 else 1)
        if shape == 0:
            return d
        if shape == 1:
            return f"CAST({self.pick([self.string, self.timestamp])(depth + 1)} AS DATE)"
        if shape == 2:
            return f"to_date({string_literal(self.pick(STRINGS))})"
        return self.pick([f"date_add({d}, {self.pick([1, -1, 30, 366])})", f"date_sub({d}, {self.pick([1, 90])})",
                          f"add_months({d}, {self.pick([1, -1, 12, 13])})", f"({d} + INTERVAL '1' MONTH)",
                          f"({d} - INTERVAL '90' DAY)", f"({d} + INTERVAL '1' YEAR)", f"({d} + 1)",
                          f"({d} - {self.pick([1, 31])})"])

    def timestamp(self, depth: int = 0) -> str:
        shape = self.rng.randrange(4 if depth < 2 else 1)
        if shape == 0:
            return f"TIMESTAMP '{self.pick(STAMPS)}'"
        if shape == 1:
            return f"CAST({self.date(depth + 1)} AS TIMESTAMP)"
        if shape == 2:
            return f"CAST({string_literal(self.pick(STRINGS + STAMPS))} AS TIMESTAMP)"
        return f"CAST({self.pick([0, 1577836800, -1, 1583650800])} AS TIMESTAMP)"

    def boolean(self, depth: int = 0) -> str:
        return self.pick(["TRUE", "FALSE", "CAST(NULL AS BOOLEAN)", f"CAST({self.string_number()} AS BOOLEAN)"])

    def value(self, depth: int = 0) -> str:
        return self.pick([self.number] * 5 + [self.string, self.date, self.timestamp, self.boolean])(depth)

    def predicate(self) -> str:
        families = [(self.number, self.number), (self.number, self.number), (self.number, self.string_number),
                    (self.number, self.string), (self.date, self.string), (self.date, self.date),
                    (self.date, self.timestamp), (self.timestamp, self.string), (self.timestamp, self.timestamp),
                    (self.string, self.string), (self.boolean, self.string), (self.value, self.value)]
        left, right = self.pick(families)
        if self.rng.random() < 0.5:
            left, right = right, left
        if self.rng.random() < 0.15:
            items = ", ".join(right(1) for _ in range(self.rng.randrange(1, 4)))
            return f"({left(1)} IN ({items}))"
        return f"({left()} {self.pick(COMPARISONS)} {right()})"

    def expression(self) -> str:
        return self.predicate() if self.rng.random() < 0.55 else self.value()


__all__ = ["ExpressionGenerator"]


# ---- predicates on columns ------------------------------------------------------------------------
COLUMN_TYPES = {"i": "INT", "n": "BIGINT", "d2": "DECIMAL(15,2)", "d6": "DECIMAL(15,6)", "d18": "DECIMAL(38,18)",
                "f": "FLOAT", "x": "DOUBLE", "c": "CHAR(5)", "v": "VARCHAR(5)", "s": "STRING", "dt": "DATE",
                "ts": "TIMESTAMP", "b": "BOOLEAN"}
CHAR_STRINGS = ["ab", "ab ", "ab   ", "ab   x", "abcde", "abcdef", "", " ", "a", "b", "zz", "ab\t"]


def column_rows() -> list[dict]:
    """SQL literals of each column, one dict per row: boundaries, NaN, -0.0, padding, DST edges."""
    ints = ["0", "1", "-1", "5", "2147483647", "-2147483648", "12", "NULL"]
    bigs = ["0", "9007199254740992", "9007199254740993", "-9223372036854775808", "9223372036854775807", "5", "NULL"]
    dec2 = ["1.01", "1.00", "0.33", "-0.01", "9999999999999.99", "5.50", "0.00", "NULL"]
    dec6 = ["0.333333", "0.333334", "1.005000", "-1.5", "123456789.123456", "0.000001", "NULL"]
    dec18 = ["0.333333333333333333", "1.004999999999999999", "1.005", "-99999999999999999999.999999999999999999",
             "0.1", "NULL"]
    floats = ["CAST(0.1 AS FLOAT)", "CAST(1.5 AS FLOAT)", "CAST('NaN' AS FLOAT)", "CAST(-0.0 AS FLOAT)",
              "CAST(16777217 AS FLOAT)", "CAST('Infinity' AS FLOAT)", "CAST(0.3 AS FLOAT)", "NULL"]
    doubles = ["0.1D", "0.30000000000000004D", "CAST('NaN' AS DOUBLE)", "-0.0D", "1e300D", "2.5D",
               "9007199254740993D", "CAST('-Infinity' AS DOUBLE)", "0.3D", "NULL"]
    chars = [string_literal(s) for s in ["ab", "ab   ", "abcde", "", "a", "zz"]] + ["NULL"]
    dates = [f"DATE '{d}'" for d in ["2020-01-01", "2020-03-08", "2020-11-01", "1999-12-31", "2020-02-29"]] + ["NULL"]
    stamps = [f"TIMESTAMP '{t}'" for t in ["2020-01-01 00:00:00+00:00", "2020-03-08 10:30:00+00:00",
                                           "2020-11-01 08:30:00+00:00", "2019-12-31 15:00:00+00:00",
                                           "2020-01-01 08:00:00+00:00", "2020-06-15 12:34:56.5+00:00"]] + ["NULL"]
    rows = []
    for k in range(36):
        pick = lambda xs: xs[(k * 7 + len(xs)) % len(xs) if k % 2 else k % len(xs)]  # noqa: E731
        rows.append({"i": pick(ints), "n": pick(bigs), "d2": pick(dec2), "d6": pick(dec6), "d18": pick(dec18),
                     "f": pick(floats), "x": pick(doubles), "c": pick(chars), "v": pick(chars), "s": pick(chars),
                     "dt": pick(dates), "ts": pick(stamps), "b": pick(["TRUE", "FALSE", "NULL"])})
    return rows


class PredicateGenerator(ExpressionGenerator):
    """``column <op> constant`` (and IN, BETWEEN) over ``COLUMN_TYPES``, constants of fitting and
    of unfitting types."""

    def constant(self, col: str) -> str:
        t = COLUMN_TYPES[col]
        if self.rng.random() < 0.1:
            return self.value(1)  # anything: mismatched types included
        if col in ("c", "v", "s"):
            return string_literal(self.pick(CHAR_STRINGS)) if self.rng.random() < 0.7 else self.string(1)
        if col == "dt":
            return self.pick([self.date, self.string, self.timestamp])(1)
        if col == "ts":
            return self.pick([self.timestamp, self.timestamp, self.string, self.date])(1)
        if col == "b":
            return self.boolean(1)
        if t in ("FLOAT", "DOUBLE") and self.rng.random() < 0.3:
            return self.pick(["0.1", "0.1F", "CAST(0.1 AS FLOAT)", "0.30000000000000004", "0.3", "1e300", "2.5",
                              "CAST('NaN' AS DOUBLE)", "16777217", "9007199254740993", "0", "-0.0D"])
        return self.pick([self.number, self.number, self.string_number])(1)

    def predicate_on(self, col: str) -> str:
        shape = self.rng.randrange(10)
        if col in ("c", "v", "s") and self.rng.random() < 0.15:
            pattern = self.pick(["ab", "ab%", "", "abcde", "ab   ", "a%", "%", "zz%", "ab___"])
            return f"{col} {self.pick(['', 'NOT '])}LIKE {string_literal(pattern)}"
        if shape == 0:
            items = ", ".join(self.constant(col) for _ in range(self.rng.randrange(1, 4)))
            return f"{col} {self.pick(['', 'NOT '])}IN ({items})"
        if shape == 1:
            return f"{col} BETWEEN {self.constant(col)} AND {self.constant(col)}"
        const = self.constant(col)
        op = self.pick(COMPARISONS)
        return f"{col} {op} {const}" if shape > 3 else f"{const} {op} {col}"

    def column_predicate(self) -> str:
        return self.predicate_on(self.pick(list(COLUMN_TYPES)))
