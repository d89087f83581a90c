"""Shared by every test folder: ``tests/`` itself is importable (``from testkit import ...``).

pytest's default ``prepend`` import mode inserts this file's directory into ``sys.path`` before
collecting the folders below it, which is all the helpers need.
"""
