"""Writing report files safely: whole or not at all, and one clear line when the disk says no.

A report is written to a temporary file next to its target and renamed over it, so a full disk
or a killed CI job never leaves a truncated ``report.json`` that a later merge would choke on.
Special files (``/dev/stdout``, a FIFO) cannot be renamed over and are written directly.
"""

from __future__ import annotations

import json as jsonlib
import os
import secrets
from pathlib import Path
from typing import Any

from mutagent import exitcodes
from mutagent.errors import MutagentError
from mutagent.model import RunData


class ReportWriteError(MutagentError):
    """A report could not be written (full disk, missing permission): exit 2 with one line."""

    exit_code = exitcodes.USAGE_ERROR


def _describe(exc: OSError) -> str:
    return exc.strerror or str(exc) or type(exc).__name__


def write_text(path: Path | str, text: str) -> Path:
    """Write ``text`` (UTF-8) to ``path`` atomically; any OSError becomes :class:`ReportWriteError`."""
    path = Path(path)
    data = text.encode("utf-8", errors="backslashreplace")  # a stray surrogate must not abort a report
    try:
        if path.exists() and not path.is_file():
            with open(path, "wb") as handle:
                handle.write(data)
            return path
        blocking = next((parent for parent in path.parents if parent.exists()), None)
        if blocking is not None and not blocking.is_dir():
            raise ReportWriteError(f"cannot write {path}: {blocking} is not a directory")
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp")
        try:
            with open(tmp, "xb") as handle:
                handle.write(data)
            os.replace(tmp, path)
        finally:
            if tmp.exists():
                tmp.unlink()
    except OSError as exc:
        raise ReportWriteError(f"cannot write {path}: {_describe(exc)}") from exc
    return path


def write_reports(
    run_data: RunData,
    json: Path | str | None = None,
    html: Path | str | None = None,
    junit: Path | str | None = None,
    *,
    sarif: Path | str | None = None,
    markdown: Path | str | None = None,
    config: dict[str, Any] | None = None,
    thresholds: dict[str, int] | None = None,
    group_by: str = "operator",
) -> list[Path]:
    """Write the requested report files and return their paths (the engine's ``run`` calls this too)."""
    written: list[Path] = []
    if json is not None:
        from mutagent.reports.stryker import to_stryker_json

        report = to_stryker_json(run_data, config=config, thresholds=thresholds)
        written.append(write_text(json, jsonlib.dumps(report, indent=1, ensure_ascii=False) + "\n"))
    if html is not None:
        from mutagent.reports.html_report import to_html

        written.append(write_text(html, to_html(run_data, group_by=group_by)))
    if junit is not None:
        from mutagent.reports.junit import to_junit

        written.append(write_text(junit, to_junit(run_data)))
    if sarif is not None:
        from mutagent.reports.sarif import to_sarif

        written.append(
            write_text(sarif, jsonlib.dumps(to_sarif(run_data), indent=1, ensure_ascii=False) + "\n")
        )
    if markdown is not None:
        from mutagent.reports.github import markdown_summary

        written.append(write_text(markdown, markdown_summary(run_data)))
    return written
