"""Generates src/todaysim/models.py from the OpenAPI document (OpenAPI/todaysim.yaml): one typed
name per schema of `components.schemas`, so the client's types never drift from the contract.

    python tools/generate_models.py [OPENAPI.yaml] [--check]

Objects become `TypedDict`s (required properties plain, the others `NotRequired`; an inline
object property gets a TypedDict of its own, named after its owner and the property), string
enums and consts `Literal`s, `oneOf`/`anyOf` `Union`s, arrays `list[...]`, maps `dict[str, ...]`,
`[T, 'null']` `Optional`. The bodies the client takes as a first field and keywords
(KEYWORD_BODIES) get `<Name>Fields` too, the keywords for `**fields: Unpack[...]` (so mypy checks
each keyword's name and type), and a name for the first field's type (`GestureType`). Request schemas stay open as the document says (a TypedDict does not
forbid other keys at run time). `--check` exits 1 when the file on disk differs from what the
document makes (Scripts/test runs it: the models are generated, and checked in CI).
Needs PyYAML (installed with the package's test extra).
"""
import difflib
import keyword
import os
import sys
from typing import Any, Optional

import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_DOCUMENT = os.path.join(HERE, "..", "..", "OpenAPI", "todaysim.yaml")
OUTPUT = os.path.join(HERE, "..", "src", "todaysim", "models.py")
PRIMITIVES = {"string": "str", "integer": "int", "number": "float", "boolean": "bool", "null": "None"}
# The bodies the client takes as one field and keywords (`gesture("s1", "pull", requestId="p1")`):
# each gets `<Name>Fields`, its other properties, for the keywords (`**fields: Unpack[...]`).
KEYWORD_BODIES = {"CreateSessionRequest": "uid", "GestureRequest": "type", "LifecycleRequest": "type", "CommandRequest": "type"}


class Generator:
    def __init__(self, document: dict[str, Any]) -> None:
        self.schemas: dict[str, Any] = document["components"]["schemas"]
        self.paths: dict[str, Any] = document.get("paths", {})
        self.lines: list[str] = []
        self.done: set[str] = set()

    def ref(self, schema: dict[str, Any]) -> str:
        return str(schema["$ref"]).rsplit("/", 1)[-1]

    def type_of(self, schema: Any, owner: str) -> str:
        """A type expression (names quoted as forward references) for `schema`."""
        if not isinstance(schema, dict) or not schema:
            return "Any"
        if "$ref" in schema:
            return repr(self.ref(schema))
        if "const" in schema:
            return f"Literal[{schema['const']!r}]"
        if "enum" in schema:
            values = [value for value in schema["enum"] if value is not None]
            literal = f"Literal[{', '.join(repr(value) for value in values)}]"
            return f"Optional[{literal}]" if None in schema["enum"] else literal
        for combinator in ("oneOf", "anyOf"):
            if combinator in schema:
                members = [self.type_of(member, f"{owner}{self.title(member, index)}")
                           for index, member in enumerate(schema[combinator])]
                return members[0] if len(members) == 1 else f"Union[{', '.join(dict.fromkeys(members))}]"
        if "allOf" in schema and "properties" not in schema and "type" not in schema:
            refs = [member for member in schema["allOf"] if "$ref" in member]
            return self.type_of(refs[0], owner) if len(refs) == 1 else "Any"
        kind = schema.get("type")
        if isinstance(kind, list):
            members = [self.type_of({**schema, "type": one}, owner) for one in kind if one != "null"]
            inner = members[0] if len(members) == 1 else f"Union[{', '.join(members)}]"
            return f"Optional[{inner}]" if "null" in kind else inner
        if kind == "array":
            return f"list[{self.type_of(schema.get('items', {}), owner + 'Item')}]"
        if kind == "object" or "properties" in schema:
            if schema.get("properties"):
                self.typed_dict(owner, schema)
                return repr(owner)
            extra = schema.get("additionalProperties")
            return f"dict[str, {self.type_of(extra, owner + 'Value')}]" if isinstance(extra, dict) else "dict[str, Any]"
        return PRIMITIVES.get(str(kind), "Any")

    def operation_types(self) -> tuple[list[str], list[str]]:
        """A type for each operation's JSON body and successful JSON answer that is a schema of its
        own (not one of `components.schemas`, made already): `<OperationId>Request` (a body that
        is JSON only) and `<OperationId>Response` (an object answer)."""
        requests: list[str] = []
        responses: list[str] = []
        for path in self.paths.values():
            for operation in path.values():
                if not isinstance(operation, dict) or "operationId" not in operation:
                    continue
                stem = operation["operationId"][:1].upper() + operation["operationId"][1:]
                content = (operation.get("requestBody") or {}).get("content", {})
                body = content.get("application/json", {}).get("schema") if list(content) == ["application/json"] else None
                if isinstance(body, dict) and "$ref" not in body:
                    self.named(stem + "Request", body, requests)
                for code, response in operation.get("responses", {}).items():
                    schema = (response.get("content", {}).get("application/json", {}).get("schema")
                              if str(code).startswith("2") and isinstance(response, dict) else None)
                    if isinstance(schema, dict) and "$ref" not in schema and schema.get("properties"):
                        self.named(stem + "Response", schema, responses)
        return requests, responses

    def named(self, name: str, schema: dict[str, Any], made: list[str]) -> None:
        """`name` for an operation's own schema: a TypedDict, or an alias of what it is."""
        if name in self.schemas or name in self.done or name in made:
            raise SystemExit(f"the operation type {name} is named twice")
        if schema.get("properties") and schema.get("type", "object") == "object":
            self.typed_dict(name, schema)
        else:
            kind = self.type_of(schema, name)
            self.lines += [f"{name} = {kind}", ""]
        made.append(name)

    @staticmethod
    def title(schema: Any, index: int) -> str:
        name = schema.get("title") if isinstance(schema, dict) else None
        return "".join(part[:1].upper() + part[1:] for part in str(name).replace("-", " ").replace(".", " ").split()) if name else f"Option{index + 1}"

    def typed_dict(self, name: str, schema: dict[str, Any], nested: Optional[str] = None) -> None:
        """A TypedDict `name`; an inline object property gets one named `<nested or name><Property>`."""
        if name in self.done:
            return
        self.done.add(name)
        required = set(schema.get("required", []))
        fields = []
        for prop, sub in schema["properties"].items():
            owner = (nested or name) + "".join(part[:1].upper() + part[1:] for part in prop.replace("-", "_").split("_"))
            kind = self.type_of(sub, owner)
            fields.append(f"    {prop!r}: {kind if prop in required else f'NotRequired[{kind}]'},")
        doc = " ".join(str(schema.get("description", "")).split())
        self.lines.append(f"{name} = TypedDict({name!r}, {{")
        self.lines += fields
        self.lines.append("})")
        if doc:
            self.lines.append(f"{name}.__doc__ = {doc[:300]!r}")
        self.lines.append("")

    def run(self) -> str:
        names: list[str] = []
        for name, schema in self.schemas.items():
            if not name.isidentifier() or keyword.iskeyword(name):
                raise SystemExit(f"schema name {name!r} is no Python identifier")
            if isinstance(schema, dict) and (schema.get("properties") and schema.get("type", "object") == "object"):
                self.typed_dict(name, schema)
            else:
                self.lines.append(f"{name} = {self.type_of(schema, name)}")
                self.lines.append("")
            names.append(name)
        requests, responses = self.operation_types()
        for name, first in KEYWORD_BODIES.items():
            schema = self.schemas[name]
            if first not in schema.get("properties", {}):
                raise SystemExit(f"{name} has no property {first}: KEYWORD_BODIES is out of date")
            stem = name.removesuffix("Request")
            self.lines += [f"{stem}{first[:1].upper()}{first[1:]} = {self.type_of(schema['properties'][first], stem)}", ""]
            rest = {prop: sub for prop, sub in schema["properties"].items() if prop != first}
            self.typed_dict(stem + "Fields", {**schema, "properties": rest,
                            "description": f"The keywords of a `{name}` after its `{first}` (the client's methods take them as `**fields`)."},
                            nested=name)
        header = ['"""The OpenAPI document\'s schemas as Python types (generated by tools/generate_models.py',
                  'from OpenAPI/todaysim.yaml: edit that document, then run the tool; do not edit this file).',
                  '',
                  'An operation whose JSON body or JSON answer is a schema of its own (none of',
                  '`components.schemas`) has a type named after it: `StepsRequest` and `StepsResponse` for',
                  '`steps`."""',
                  "from typing import Any, Literal, NotRequired, Optional, TypedDict, Union", "",
                  f"SCHEMAS = {tuple(names)!r}", "",
                  f"REQUESTS = {tuple(requests)!r}", "",
                  f"RESPONSES = {tuple(responses)!r}", ""]
        return "\n".join(header + self.lines).rstrip() + "\n"


def load_document(path: Optional[str] = None) -> dict[str, Any]:
    """The OpenAPI document at `path` (default OpenAPI/todaysim.yaml), parsed."""
    with open(path or DEFAULT_DOCUMENT, encoding="utf-8") as file:
        document = yaml.safe_load(file)
    if not isinstance(document, dict):
        raise SystemExit(f"{path or DEFAULT_DOCUMENT} is no OpenAPI document (not a mapping)")
    return document


def write_or_check(output: str, text: str, check: bool, tool: str, summary: str) -> int:
    """Writes `text` to `output`, or with `check` compares them: a stale file exits 1 naming the
    difference (a unified diff, cut short) and the tool that remakes it. Shared with
    typescript/tools/generate_types.py, so both generators' drift checks read alike."""
    shown = os.path.relpath(output, os.path.join(HERE, "..", ".."))
    if check:
        current = open(output, encoding="utf-8").read() if os.path.exists(output) else ""
        if current != text:
            diff = list(difflib.unified_diff(current.splitlines(), text.splitlines(), f"{shown} (on disk)",
                                             f"{shown} (what the sources make)", lineterm="", n=1))
            cut = diff[:60] + ([f"... {len(diff) - 60} more diff lines"] if len(diff) > 60 else [])
            print(f"{shown} is not what its sources make: run {tool}", *cut, sep="\n", file=sys.stderr)
            return 1
        print(f"{shown} matches its sources ({summary})")
        return 0
    with open(output, "w", encoding="utf-8") as file:
        file.write(text)
    print(f"wrote {shown}")
    return 0


def main(argv: list[str]) -> int:
    check = "--check" in argv
    paths = [arg for arg in argv if not arg.startswith("--")]
    text = Generator(load_document(paths[0] if paths else None)).run()
    return write_or_check(OUTPUT, text, check, "python/tools/generate_models.py",
                          f"{text.count(' = TypedDict(')} TypedDicts")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
