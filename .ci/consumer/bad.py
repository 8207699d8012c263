"""Misuses mypy --strict must report: the stubs give real types, not Any."""

from pe_reference import Convention, compare, derivation, encoding, value

derivation("4", 2, 4)
value(1, 2, 4, dtype="float8")
compare(encoding(2, 2)).nothing
size: str = encoding(2, 2)[0][0]
Convention(odd="pad")
