"""Download and unpack the corpus: pinned sdists of public agent code that was not written here.

Why sdists and ``pip download``: the operators must be judged on code as its authors publish it,
pinned to one version so the hand labels in ``sites.toml`` keep pointing at the same lines. Each
sdist is fetched with pip's own client (``--no-deps --no-binary :all:``), checked against the
sha256 recorded in ``packages.toml``, and unpacked under ``bench/corpus/.cache/src/`` (gitignored:
downloaded code is never committed). Already unpacked packages are skipped, so a second run is
offline.

Usage: ``python bench/corpus/fetch.py [--only NAME ...] [--with-test]`` (the test split is fetched
only on request: it is read by nobody tuning the operators).
Exit codes: 0 every package present, 1 a download, checksum or listed file failed, 2 bad usage.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import subprocess
import sys
import tarfile
import urllib.request
import zipfile
from dataclasses import dataclass
from pathlib import Path

from rich.console import Console

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

CORPUS = Path(__file__).resolve().parent
CACHE = CORPUS / ".cache"
SDISTS = CACHE / "sdists"
SOURCES = CACHE / "src"

console = Console(stderr=True, highlight=False)


@dataclass(frozen=True)
class Package:
    """One pinned sdist and the files of it that the labels cover."""

    name: str
    version: str
    sha256: str
    root: str
    files: tuple[str, ...]
    split: str = "dev"  # "test": labelled blind and not yet scored (see README, "The blind split")
    labels: Path | None = None  # the labels/NAME.toml file holding its pin and labels, if any

    @property
    def source_dir(self) -> Path:
        """Where the unpacked sdist lives: the target directory mutagent is pointed at."""
        return SOURCES / self.root


LABELS_DIR = CORPUS / "labels"


def load_packages(
    path: Path = CORPUS / "packages.toml", labels_dir: Path | None = LABELS_DIR
) -> list[Package]:
    """Read the corpus manifest: ``packages.toml`` (the first corpus, all dev) and the ``[[package]]``
    table of every ``labels/*.toml`` file (one per package added since, each with its ``split``)."""
    sources = [(path, tomllib.loads(path.read_text(encoding="utf-8")))]
    if labels_dir is not None and labels_dir.is_dir():
        for label_file in sorted(labels_dir.glob("*.toml")):
            sources.append((label_file, tomllib.loads(label_file.read_text(encoding="utf-8"))))
    packages = []
    for origin, data in sources:
        for entry in data.get("package", []):
            split = entry.get("split", "dev")
            if split not in ("dev", "test"):
                raise ValueError(f"{origin.name}: package {entry['name']}: split must be dev or test")
            packages.append(
                Package(
                    name=entry["name"],
                    version=entry["version"],
                    sha256=entry["sha256"],
                    root=entry["root"],
                    files=tuple(entry["files"]),
                    split=split,
                    labels=None if origin == path else origin,
                )
            )
    return packages


def _sdist_of(package: Package) -> Path | None:
    """The downloaded archive of ``package``, if any (pip normalises the file name)."""
    stem = package.root  # e.g. openai_agents-0.24.0, the sdist's own top directory name
    for suffix in (".tar.gz", ".zip"):
        candidate = SDISTS / f"{stem}{suffix}"
        if candidate.is_file():
            return candidate
    return None


def _download(package: Package) -> Path:
    SDISTS.mkdir(parents=True, exist_ok=True)
    command = [
        sys.executable,
        "-m",
        "pip",
        "download",
        "--no-deps",
        "--no-binary",
        ":all:",
        "--disable-pip-version-check",
        "-q",
        f"{package.name}=={package.version}",
        "-d",
        str(SDISTS),
    ]
    result = subprocess.run(command, capture_output=True, text=True, check=False)
    archive = _sdist_of(package)
    if result.returncode != 0 or archive is None:
        # pip download prepares the sdist's metadata, which builds it: a package with a compiled
        # part (litellm's Rust core) fails there although its sdist is on the index
        archive = _download_from_index(package)
    if archive is None:
        tail = (result.stderr or result.stdout).strip().splitlines()[-1:] or ["no sdist found"]
        raise RuntimeError(f"pip download {package.name}=={package.version} failed: {tail[0]}")
    return archive


def _download_from_index(package: Package) -> Path | None:
    """The sdist ``package.root`` + .tar.gz/.zip straight from PyPI's simple index (PEP 691 JSON),
    without building it; None when the index has no such file."""
    request = urllib.request.Request(
        f"https://pypi.org/simple/{package.name}/",
        headers={"Accept": "application/vnd.pypi.simple.v1+json"},
    )
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            files = json.load(response).get("files", [])
        for suffix in (".tar.gz", ".zip"):
            wanted = [f for f in files if f["filename"].lower() == f"{package.root}{suffix}".lower()]
            if wanted:
                target = SDISTS / f"{package.root}{suffix}"
                urllib.request.urlretrieve(wanted[0]["url"], target)
                return target
    except (OSError, ValueError, KeyError):
        return None
    return None


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _unpack(archive: Path) -> None:
    SOURCES.mkdir(parents=True, exist_ok=True)
    if archive.suffix == ".zip":
        with zipfile.ZipFile(archive) as zipped:
            zipped.extractall(SOURCES)
        return
    with tarfile.open(archive) as tar:
        tar.extractall(SOURCES, filter="data")


def fetch(package: Package) -> None:
    """Make ``package`` present and unpacked; raise RuntimeError with a one-line reason if not."""
    if not package.source_dir.is_dir():
        archive = _sdist_of(package) or _download(package)
        actual = _sha256(archive)
        if actual != package.sha256:
            raise RuntimeError(f"{archive.name}: sha256 {actual} is not the pinned {package.sha256}")
        _unpack(archive)
    missing = [f for f in package.files if not (package.source_dir / f).is_file()]
    if missing:
        raise RuntimeError(f"{package.name}: listed file(s) not in the sdist: {', '.join(missing)}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Download and unpack the pinned corpus sdists.")
    parser.add_argument("--only", action="append", metavar="NAME", help="fetch only this package")
    parser.add_argument(
        "--with-test", action="store_true", help="also the test split (labelled blind, not yet scored)"
    )
    args = parser.parse_args(argv)
    packages = [p for p in load_packages() if args.with_test or args.only or p.split == "dev"]
    if args.only:
        unknown = sorted(set(args.only) - {p.name for p in packages})
        if unknown:
            console.print(f"error: unknown package(s): {', '.join(unknown)}")
            return 2
        packages = [p for p in packages if p.name in args.only]
    failed = 0
    for package in packages:
        try:
            fetch(package)
        except (RuntimeError, OSError, tarfile.TarError) as error:
            failed += 1
            console.print(f"[red]✗[/] {package.name} {package.version}: {error}")
        else:
            console.print(f"[green]✓[/] {package.name} {package.version}: {len(package.files)} file(s)")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
