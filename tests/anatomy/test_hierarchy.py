"""Class hierarchies read statically (``mutagent.anatomy.hierarchy``), and the equivalent mutants
they expose (issue 26, item 6): dropping a class from an ``except (...)`` or ``isinstance(...)``
tuple that still names one of its base classes changes nothing, so the mutant is Ignored with
the reason instead of being reported as a survivor nobody can kill.

The fixture projects are written to ``tmp_path``: a generated SDK's exception module (as a
vendored package of the target, and as an installed package found on ``sys.path``, which must
not be imported), relative imports, star re-exports and aliases; and the cases that prove
nothing (an unknown package, a name bound twice, a class with a metaclass of its own).
"""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import pytest

from mutagent.anatomy.hierarchy import subclass_kept
from mutagent.model import Mutant
from mutagent.mutation.context import SourceContext
from mutagent.mutation.generate import generate_for_source
from mutagent.mutation.registry import all_operators

#: A generated SDK's exceptions, as Stainless-style clients lay them out.
SDK_EXCEPTIONS = """
    import httpx


    class VendorError(Exception):
        pass


    class APIError(VendorError):
        message: str


    class APIConnectionError(APIError):
        def __init__(self, *, message="Connection error.", request):
            super().__init__(message)


    class APITimeoutError(APIConnectionError):
        def __init__(self, request):
            super().__init__(message="Request timed out.", request=request)


    class APIStatusError(APIError):
        status_code: int


    class RateLimitError(APIStatusError):
        status_code = 429


    class InternalServerError(APIStatusError):
        pass
"""
SDK_INIT = """
    from ._exceptions import *
    from ._exceptions import APIConnectionError as APIConnectionError
    from . import _exceptions as exceptions

    ConnectionFailure = APIConnectionError
"""
AGENT = """
    import vendorsdk
    from vendorsdk import APIConnectionError, APITimeoutError, InternalServerError, RateLimitError


    class Agent:
        def __init__(self, client):
            self.client = client

        def turn(self, body):
            for attempt in range(3):
                try:
                    with self.client.messages.stream(**body) as stream:
                        return stream.get_final_message()
                except (APIConnectionError, APITimeoutError) as exc:
                    self.wait(attempt, exc)
                except (vendorsdk.RateLimitError, vendorsdk.InternalServerError):
                    self.wait(attempt, None)

        def retryable(self, err):
            return isinstance(err, (APITimeoutError, vendorsdk.ConnectionFailure, RateLimitError))
"""


def write(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), encoding="utf-8")
    return root


def generated(root: Path, relative: str, *operators: str) -> list[Mutant]:
    registry = all_operators()
    text = (root / relative).read_text(encoding="utf-8")
    return generate_for_source(text, relative, [registry[name] for name in operators], root=root)


def ignored(mutants: list[Mutant]) -> dict[str, str]:
    return {m.description: m.ignored_reason or "" for m in mutants if m.ignored_reason is not None}


def live(mutants: list[Mutant]) -> list[str]:
    return sorted(m.description for m in mutants if m.ignored_reason is None)


@pytest.fixture
def vendored(tmp_path: Path) -> Path:
    """The SDK is a package of the target itself (classes defined in the target's own files)."""
    return write(
        tmp_path,
        {
            "vendorsdk/__init__.py": SDK_INIT,
            "vendorsdk/_exceptions.py": SDK_EXCEPTIONS,
            "agent/__init__.py": "",
            "agent/loop.py": AGENT,
        },
    )


def test_dropping_a_timeout_beside_its_connection_base_is_ignored(vendored: Path) -> None:
    mutants = generated(vendored, "agent/loop.py", "drop-disconnect-handling")
    reasons = ignored(mutants)
    assert reasons == {
        "except no longer catches vendorsdk.APITimeoutError": "equivalent mutant: APITimeoutError is a "
        "subclass of APIConnectionError, which stays in the tuple: it is still matched"
    }
    assert live(mutants) == ["except no longer catches vendorsdk.APIConnectionError"]  # a real change


def test_isinstance_tuples_follow_aliases_and_re_exports(vendored: Path) -> None:
    mutants = generated(vendored, "agent/loop.py", "misclassify-retryable")
    in_isinstance = [m for m in mutants if "ConnectionFailure" in m.original]
    # ``vendorsdk.ConnectionFailure`` is ``APIConnectionError`` under another name (an alias in
    # the package's __init__): APITimeoutError, which derives from it, is still matched
    assert ignored(in_isinstance) == {
        "APITimeoutError no longer retried": "equivalent mutant: APITimeoutError is a subclass of "
        "vendorsdk.ConnectionFailure, which stays in the tuple: it is still matched"
    }
    assert live(in_isinstance) == ["RateLimitError no longer retried"]


def test_sibling_classes_prove_nothing(vendored: Path) -> None:
    """RateLimitError and InternalServerError share a base, but neither is the other's."""
    mutants = generated(vendored, "agent/loop.py", "misclassify-retryable")
    siblings = [m for m in mutants if "InternalServerError" in m.original]
    assert len(siblings) == 2 and ignored(siblings) == {}


def test_an_installed_package_is_read_without_importing_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    site = write(
        tmp_path / "site",
        {"vendorsdk/__init__.py": SDK_INIT, "vendorsdk/_exceptions.py": SDK_EXCEPTIONS},
    )
    # importing it would fail: the hierarchy must be read from the source, not from the module
    (site / "vendorsdk" / "__init__.py").write_text(
        "raise RuntimeError('imported')\n" + textwrap.dedent(SDK_INIT), encoding="utf-8"
    )
    monkeypatch.syspath_prepend(str(site))
    target = write(tmp_path / "target", {"agent/__init__.py": "", "agent/loop.py": AGENT})
    mutants = generated(target, "agent/loop.py", "drop-disconnect-handling")
    assert list(ignored(mutants)) == ["except no longer catches vendorsdk.APITimeoutError"]
    assert "vendorsdk" not in sys.modules


def test_relative_imports_inside_the_target(tmp_path: Path) -> None:
    root = write(
        tmp_path,
        {
            "src/myagent/__init__.py": "",
            "src/myagent/errors.py": """
                class Retryable(Exception):
                    pass


                class StreamCut(Retryable, ConnectionResetError):
                    pass
            """,
            "src/myagent/sub/__init__.py": "",
            "src/myagent/sub/loop.py": """
                from ..errors import Retryable, StreamCut
                from .. import errors


                def retryable(exc):
                    first = isinstance(exc, (StreamCut, errors.Retryable))
                    return first, isinstance(exc, (StreamCut, ConnectionError))
            """,
        },
    )
    text = (root / "src/myagent/sub/loop.py").read_text(encoding="utf-8")
    ctx = SourceContext(text, "src/myagent/sub/loop.py", root)
    first, second = [call.args[1].value for call in _isinstance_calls(ctx)]
    cut, base = [e.value for e in first.elements]
    assert subclass_kept(ctx, cut, [cut, base]) == (
        "StreamCut is a subclass of errors.Retryable, which stays in the tuple: it is still matched"
    )
    assert subclass_kept(ctx, base, [cut, base]) is None  # the base is not a subclass of StreamCut
    cut, builtin = [e.value for e in second.elements]  # StreamCut -> ConnectionResetError -> ConnectionError
    assert subclass_kept(ctx, cut, [cut, builtin]) is not None


def test_builtin_exceptions(tmp_path: Path) -> None:
    mutants = generate_for_source(
        textwrap.dedent(
            """
            import anthropic

            def turn(client, body):
                try:
                    with client.messages.stream(**body) as stream:
                        return stream.get_final_message()
                except (ConnectionResetError, ConnectionError, anthropic.APITimeoutError) as exc:
                    return retry(body, exc)
            """
        ),
        "loop.py",
        [all_operators()["drop-disconnect-handling"]],
        root=tmp_path,
    )
    assert ignored(mutants) == {
        "except no longer catches builtins.ConnectionResetError": "equivalent mutant: ConnectionResetError "
        "is a subclass of ConnectionError, which stays in the tuple: it is still matched"
    }


@pytest.mark.parametrize(
    "files",
    [
        # the package is nowhere to be read
        {},
        # the name is bound twice (which one holds is a run-time matter)
        {
            "vendorsdk/__init__.py": "try:\n    from ._exceptions import *\nexcept ImportError:\n"
            "    class APITimeoutError(Exception):\n        pass\n    class APIConnectionError(Exception):\n"
            "        pass\n",
            "vendorsdk/_exceptions.py": SDK_EXCEPTIONS,
        },
        # a metaclass of its own could answer isinstance differently
        {
            "vendorsdk/__init__.py": "class Meta(type):\n    pass\n\n\n"
            "class APIConnectionError(Exception, metaclass=Meta):\n    pass\n\n\n"
            "class APITimeoutError(APIConnectionError):\n    pass\n",
        },
    ],
    ids=["unknown-package", "bound-twice", "metaclass"],
)
def test_what_cannot_be_resolved_keeps_the_mutant(tmp_path: Path, files: dict[str, str]) -> None:
    root = write(tmp_path, {**files, "agent/__init__.py": "", "agent/loop.py": AGENT})
    mutants = generated(root, "agent/loop.py", "drop-disconnect-handling")
    assert ignored(mutants) == {}
    assert "except no longer catches vendorsdk.APITimeoutError" in live(mutants)


def _isinstance_calls(ctx: SourceContext) -> list:
    import libcst.matchers as m

    return ctx.findall(m.Call(func=m.Name("isinstance")))
