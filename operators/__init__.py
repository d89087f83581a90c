"""mutagent's operator library: one module per operator, each a single ``Operator`` subclass.

Modules whose name starts with ``_`` hold shared matchers and vocabulary, not operators.
"""
