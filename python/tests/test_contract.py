"""The client never drifts from the OpenAPI document the server serves: every operation has
exactly one method with the document's HTTP method and path, and every schema is a type in
todaysim.models (generated from the document; tools/generate_models.py --check proves the file
is what the document makes)."""
import os
import subprocess
import sys
from typing import Any

import yaml

from todaysim import OPERATIONS, Client, models

HERE = os.path.dirname(os.path.abspath(__file__))


def served_document(todaysim: Client) -> dict[str, Any]:
    document = yaml.safe_load(todaysim.openapi_document())
    assert isinstance(document, dict)
    return document


def test_every_operation_has_one_method_with_its_method_and_path(todaysim: Client) -> None:
    document = served_document(todaysim)
    operations = {op["operationId"]: (method.upper(), path)
                  for path, item in document["paths"].items() for method, op in item.items()
                  if method in ("get", "post", "put", "patch", "delete")}
    assert sorted(operations) == sorted(OPERATIONS), "operations without a method, or methods without an operation"
    for operation_id, (method, path) in operations.items():
        assert OPERATIONS[operation_id][:2] == (method, path), operation_id


def test_every_schema_is_a_type(todaysim: Client) -> None:
    document = served_document(todaysim)
    assert list(models.SCHEMAS) == list(document["components"]["schemas"])
    for name in models.SCHEMAS + models.REQUESTS + models.RESPONSES:
        assert hasattr(models, name), name
    # The protocol's values (issue 45, item 3): the bridge schemas name them, so the models do.
    assert models.RefreshResultEvent.__annotations__["status"].__forward_arg__ == "RefreshStatus"
    assert models.RefreshError.__required_keys__ == {"stage", "message"}


def test_the_models_are_what_the_document_makes() -> None:
    tool = os.path.join(HERE, "..", "tools", "generate_models.py")
    checked = subprocess.run([sys.executable, tool, "--check"], capture_output=True, text=True)
    assert checked.returncode == 0, checked.stderr + checked.stdout
