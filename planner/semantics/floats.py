"""FLOAT (IEEE binary32) and DOUBLE arithmetic as the JVM does it, in Python.

Python floats are doubles. A FLOAT value is kept as the double holding the same binary32 value;
every FLOAT operation rounds its exact result to binary32 (round half to even, like the JVM).
Conversions from exact numbers (``Decimal``, ``int``, ``Fraction``) are correctly rounded in one
step, as ``BigDecimal.floatValue``/``doubleValue`` and ``(float) long`` are: rounding through a
double first would round twice (``float(float(x))`` is wrong for a few values).
"""
from __future__ import annotations

import math
import struct
from decimal import Decimal
from fractions import Fraction

FLOAT_MAX = struct.unpack("<f", struct.pack("<I", 0x7F7FFFFF))[0]
_FLOAT_MIN_EXP = -149  # smallest subnormal 2**-149


def to_float32(x: float) -> float:
    """Round a double to binary32 (JVM ``(float) d``): half to even, overflow to infinity."""
    if math.isnan(x) or math.isinf(x):
        return x
    try:
        return struct.unpack("<f", struct.pack("<f", x))[0]
    except OverflowError:
        return math.copysign(math.inf, x)


def exact_to_float32(q: Fraction | Decimal | int) -> float:
    """The binary32 nearest to an exact number (ties to even), as ``BigDecimal.floatValue``."""
    q = Fraction(q)
    if q == 0:
        return 0.0
    sign = -1.0 if q < 0 else 1.0
    a = abs(q)
    e = a.numerator.bit_length() - a.denominator.bit_length()
    if Fraction(2) ** e > a:
        e -= 1
    # a in [2**e, 2**(e+1)): 24 significant bits, or fewer below the normal range.
    step_exp = max(e - 23, _FLOAT_MIN_EXP)
    step = Fraction(2) ** step_exp
    n = a / step
    m = n.numerator // n.denominator
    rest = n - m
    if rest > Fraction(1, 2) or (rest == Fraction(1, 2) and m % 2 == 1):
        m += 1
    value = m * step
    if value > Fraction(FLOAT_MAX):  # rounded up to 2**128: overflow
        return sign * math.inf
    return sign * float(value)


def float32_op(op: str, a: float, b: float) -> float:
    """A FLOAT ``+ - *`` (exact in double for binary32 inputs, then rounded once to binary32)."""
    if op == "+":
        r = a + b
    elif op == "-":
        r = a - b
    else:
        r = a * b
    # The double result of + - * on binary32 inputs is exact or already correctly rounded for
    # binary32 (Figueroa: double has > 2*24+2 bits), so one more rounding is the IEEE result.
    return to_float32(r)


def float32_div(a: float, b: float) -> float:
    return to_float32(a / b)  # double has >= 2*24+2 bits: rounding twice is exact (Figueroa)


__all__ = ["to_float32", "exact_to_float32", "float32_op", "float32_div", "FLOAT_MAX"]
