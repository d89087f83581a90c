"""Inside a probe test: each statement after the script observed instead of asserted.

A probe is one of the suite's tests with a fault inserted into its script and every statement
after the script wrapped by this module: an ``assert`` evaluates its operands once and records
their values and whether it held, a call records what it returned or raised, ``pytest.raises``
records what was raised and whether the test's own ``raises`` accepted it, any other statement
records whether it failed. Nothing raises out of a probe: the run goes on to the end, and
``finish`` records what the fake server saw (every request's body and arrival time, the tool
results each request carried, the server's problems). The record goes to the file named by
``MUTAGENT_EXPLORE`` (its ``record`` path, with ``.probe.json`` appended); ``mutagent suggest``
compares the original's records with the mutant's. Imported by the probe files only.
"""

from __future__ import annotations

import ast
import json
import operator
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

OPERATORS: dict[str, Callable[[Any, Any], Any]] = {
    "==": operator.eq,
    "!=": operator.ne,
    "<": operator.lt,
    "<=": operator.le,
    ">": operator.gt,
    ">=": operator.ge,
    "in": lambda a, b: a in b,
    "not in": lambda a, b: a not in b,
    "is": operator.is_,
    "is not": operator.is_not,
}
MAX_REPR = 400


def _type_name(kind: type) -> str:
    return kind.__qualname__ if kind.__module__ == "builtins" else f"{kind.__module__}.{kind.__qualname__}"


def value_record(value: Any) -> dict[str, Any]:
    """A value as the probe keeps it: its repr, and whether that repr is a literal that reads back
    as an equal value (only such a value can be written into a test)."""
    try:
        text = repr(value)
    except Exception:  # noqa: BLE001 - a repr that fails is just not a literal
        return {"repr": "", "literal": False, "type": _type_name(type(value))}
    literal = False
    if len(text) <= MAX_REPR and not (isinstance(value, float) and value != value):
        try:
            literal = bool(ast.literal_eval(text) == value)
        except Exception:  # noqa: BLE001 - not a literal (or one that cannot be compared)
            literal = False
    return {"repr": text[:MAX_REPR], "literal": literal, "type": _type_name(type(value))}


def error_record(error: BaseException) -> dict[str, Any]:
    return {
        "error": _type_name(type(error)),
        "message": str(error).splitlines()[0][:200] if str(error) else "",
    }


class Probe:
    """The observations of one probe run, written at ``finish``."""

    def __init__(self, key: str) -> None:
        self.key = key
        self.entries: dict[str, dict[str, Any]] = {}
        order = os.environ.get("MUTAGENT_EXPLORE", "")
        try:
            self.path = str(json.loads(order)["record"]) + ".probe.json" if order else ""
        except (ValueError, KeyError, TypeError):
            self.path = ""

    def _value(self, thunk: Callable[[], Any]) -> tuple[dict[str, Any], Any, bool]:
        try:
            value = thunk()
        except BaseException as error:  # noqa: BLE001 - a probe observes everything, raises nothing
            if isinstance(error, (KeyboardInterrupt, SystemExit)):
                raise
            return error_record(error), None, False
        return value_record(value), value, True

    def compare(self, index: int, operands: list[Callable[[], Any]], ops: list[str]) -> None:
        """An ``assert a OP b [OP c]``: each operand once, left to right, then the comparison."""
        values: list[dict[str, Any]] = []
        live: list[Any] = []
        for thunk in operands:
            record, value, ok = self._value(thunk)
            values.append(record)
            if not ok:
                break
            live.append(value)
        held: bool | None = None
        if len(live) == len(operands):
            try:
                held = all(bool(OPERATORS[op](a, b)) for op, a, b in zip(ops, live, live[1:], strict=False))
            except Exception:  # noqa: BLE001 - an operator that raises: the assert did not hold
                held = False
        self.entries[str(index)] = {"kind": "compare", "values": values, "held": held}

    def truth(self, index: int, thunk: Callable[[], Any]) -> None:
        """An ``assert x``: the value and whether it was true."""
        record, value, ok = self._value(thunk)
        held = None
        if ok:
            try:
                held = bool(value)
            except Exception:  # noqa: BLE001
                held = False
        self.entries[str(index)] = {"kind": "truth", "values": [record], "held": held}

    def call(self, index: int, thunk: Callable[[], Any]) -> None:
        """An expression statement (the agent's run, mostly): what it returned or raised."""
        record, _, _ = self._value(thunk)
        self.entries[str(index)] = {"kind": "call", "values": [record]}

    @contextmanager
    def raises(self, index: int, expect: Callable[[], Any]) -> Iterator[Any]:
        """The test's own ``with pytest.raises(...)``: what the body raised, and whether that
        ``raises`` accepted it (a wrong type, no exception or a message not matching: not)."""
        entry: dict[str, Any] = {"kind": "raises", "raised": None, "accepted": False}
        self.entries[str(index)] = entry
        manager = expect()
        info = manager.__enter__()
        try:
            yield info
        except BaseException as error:  # noqa: BLE001
            if isinstance(error, (KeyboardInterrupt, SystemExit)):
                raise
            entry["raised"] = error_record(error)
            try:
                entry["accepted"] = bool(manager.__exit__(type(error), error, error.__traceback__))
            except BaseException:  # noqa: BLE001 - ``raises`` refused it (no match)
                entry["accepted"] = False
        else:
            try:
                manager.__exit__(None, None, None)
            except BaseException:  # noqa: BLE001 - DID NOT RAISE
                entry["accepted"] = False

    @contextmanager
    def stmt(self, index: int) -> Iterator[None]:
        """Any other statement: whether it failed."""
        entry: dict[str, Any] = {"kind": "stmt", "error": None}
        self.entries[str(index)] = entry
        try:
            yield
        except BaseException as error:  # noqa: BLE001
            if isinstance(error, (KeyboardInterrupt, SystemExit)):
                raise
            entry["error"] = error_record(error)

    def finish(self, fake_model: Any) -> None:
        """What the fake server saw, then the record to its file."""
        requests = []
        for position, request in enumerate(fake_model.requests):
            try:
                results = fake_model.tool_results(position)
            except Exception:  # noqa: BLE001 - a request without a history to read
                results = {}
            requests.append(
                {
                    "time": request.time,
                    "body": request.body,
                    "outcome": request.outcome,
                    "tool_results": results,
                }
            )
        record = {
            "key": self.key,
            "entries": self.entries,
            "requests": requests,
            "problems": fake_model.problems(),
        }
        if self.path:
            try:
                with open(self.path, "w", encoding="utf-8") as handle:
                    json.dump(record, handle, default=repr)
            except OSError:
                pass
