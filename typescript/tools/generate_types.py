"""Generates src/generated/api.ts from the OpenAPI document (OpenAPI/todaysim.yaml), and sets
package.json's `version` to the repository's VERSION, so the TypeScript package never drifts
from the contract or from the binary's version.

    python3 tools/generate_types.py [OPENAPI.yaml] [--check]
    python3 tools/generate_types.py --to-json FILE|-     (prints a YAML document as JSON)

api.ts holds one exported type per schema of `components.schemas` (objects as object types,
required properties plain and the others optional; string enums and consts literal types;
`oneOf`/`anyOf` unions; `allOf` of references intersections; an object of at most one property
a union of one-property objects; arrays, maps, `[T, 'null']` as TypeScript spells them;
`if`/`then`/`not` are checks at run time, not types), `SCHEMAS` (their names in document order),
`OPERATIONS` (each operation's method and path) and the interface `Operations` (per operation
its path parameters, query, headers, body and answer), which the client's signatures are
written against, and a name for each operation's own body or answer (`StepsRequest`,
`StepsResponse`). bridge.ts holds the bridge contract's lookups per message type (the whole
message, what `emit()` resolves to, the HTTP answer), made by tools/bridge_contract.py from
`WebToNativeEvent` and `NativeToWebEvent`. `--check` exits 1 naming the difference when api.ts,
bridge.ts or package.json's version is not what the sources make (systemtests/test_typescript.py runs
it). `--to-json` lets the package's tests read the document a server serves (Node has no YAML
parser). Needs PyYAML; the document loading and the drift check are
python/tools/generate_models.py's.
"""
import json
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
PACKAGE = os.path.join(HERE, "..")
sys.path.insert(0, os.path.join(HERE, "..", "..", "python", "tools"))
from generate_models import load_document, write_or_check  # noqa: E402  (the shared half)
from bridge_contract import bridge_module  # noqa: E402  (src/generated/bridge.ts)

OUTPUT = os.path.join(PACKAGE, "src", "generated", "api.ts")
BRIDGE_OUTPUT = os.path.join(PACKAGE, "src", "generated", "bridge.ts")
PACKAGE_JSON = os.path.join(PACKAGE, "package.json")
VERSION_FILE = os.path.join(PACKAGE, "..", "VERSION")
PRIMITIVES = {"string": "string", "integer": "number", "number": "number", "boolean": "boolean", "null": "null"}
IDENTIFIER = re.compile(r"^[A-Za-z_$][A-Za-z0-9_$]*$")
METHODS = ("get", "put", "post", "delete", "patch", "head", "options")
TEXT_TYPES = ("text/", "application/xml", "application/x-ndjson", "application/yaml")


def doc_comment(text, indent):
    """`text` as a JSDoc block at `indent` (nothing when there is no text)."""
    lines = str(text or "").replace("*/", "*\\/").strip().splitlines()
    if not lines:
        return []
    if len(lines) == 1:
        return [f"{indent}/** {lines[0].strip()} */"]
    return [f"{indent}/**"] + [f"{indent} * {line}".rstrip() for line in lines] + [f"{indent} */"]


def literal(value):
    return json.dumps(value, ensure_ascii=False)


def key(name):
    return name if IDENTIFIER.match(name) else literal(name)


def union(members):
    unique = list(dict.fromkeys(members))
    if "unknown" in unique:
        return "unknown"
    return unique[0] if len(unique) == 1 else " | ".join(unique)


def grouped(expression):
    """`expression` safe to put before `[]` or inside `&`."""
    depth, bare = 0, False
    for char in expression:
        depth += char in "{([<"
        depth -= char in "})]>"
        bare = bare or (depth == 0 and char in "|&")
    return f"({expression})" if bare else expression


class Generator:
    def __init__(self, document):
        self.document = document
        self.schemas = document.get("components", {}).get("schemas", {}) or {}
        self.parameters = document.get("components", {}).get("parameters", {}) or {}

    def resolve(self, item):
        """A `#/components/parameters/...` (or any local) reference followed to what it names."""
        while isinstance(item, dict) and "$ref" in item:
            node = self.document
            for part in item["$ref"].lstrip("#/").split("/"):
                node = node[part]
            item = node
        return item

    def type_of(self, schema, indent):
        """A TypeScript type expression for `schema`; nested objects are written inline."""
        if schema is True or not isinstance(schema, dict) or not schema:
            return "unknown"
        if "$ref" in schema:
            return schema["$ref"].rsplit("/", 1)[-1]
        if "const" in schema:
            return literal(schema["const"])
        if "enum" in schema:
            return union([literal(value) for value in schema["enum"]])
        for combinator in ("oneOf", "anyOf"):
            if combinator in schema:
                members = [self.type_of(member, indent) for member in schema[combinator]]
                rest = {k: v for k, v in schema.items() if k not in (combinator, "discriminator")}
                if rest.get("properties") or rest.get("type") in ("object", "array"):
                    return f"{grouped(union(members))} & {grouped(self.type_of(rest, indent))}"
                return union(members)
        kind = schema.get("type")
        if isinstance(kind, list):
            return union(["null" if one == "null" else self.type_of({**schema, "type": one}, indent) for one in kind])
        if kind == "array":
            return f"{grouped(self.type_of(schema.get('items', {}), indent))}[]"
        if kind == "object" or "properties" in schema:
            shape = self.object_type(schema, indent)
            parts = [self.type_of(member, indent) for member in schema.get("allOf", [])
                     if isinstance(member, dict) and ("$ref" in member or "properties" in member or "type" in member)]
            return " & ".join([grouped(part) for part in parts] + [shape]) if parts else shape
        if "allOf" in schema:
            parts = [self.type_of(member, indent) for member in schema["allOf"]
                     if isinstance(member, dict) and ("$ref" in member or "properties" in member or "type" in member)]
            return " & ".join(grouped(part) for part in parts) if parts else "unknown"
        return PRIMITIVES.get(kind, "unknown")

    def object_type(self, schema, indent):
        properties = schema.get("properties") or {}
        extra = schema.get("additionalProperties")
        if not properties:
            value = self.type_of(extra, indent) if isinstance(extra, dict) else "unknown"
            return f"{{ [key: string]: {value} }}"
        required = set(schema.get("required", []))
        inner = indent + "  "
        if schema.get("maxProperties") == 1 and not required:
            # Exactly one of the keys (a batch step): a union of one-key objects.
            return union([f"{{ {key(name)}: {self.type_of(sub, inner)} }}" for name, sub in properties.items()])
        lines = ["{"]
        for name, sub in properties.items():
            lines += doc_comment(sub.get("description") if isinstance(sub, dict) else None, inner)
            optional = "" if name in required else "?"
            lines.append(f"{inner}{key(name)}{optional}: {self.type_of(sub, inner)};")
        if isinstance(extra, dict):
            lines.append(f"{inner}[key: string]: unknown;")
        lines.append(indent + "}")
        return "\n".join(lines)

    def operations(self):
        """[(operationId, METHOD, path, operation, path item)] in document order."""
        found = []
        for path, item in (self.document.get("paths") or {}).items():
            for method, operation in item.items():
                if method in METHODS and isinstance(operation, dict):
                    if not IDENTIFIER.match(str(operation.get("operationId", ""))):
                        raise SystemExit(f"{method.upper()} {path}: operationId {operation.get('operationId')!r} is no identifier")
                    found.append((operation["operationId"], method.upper(), path, operation, item))
        return found

    def parameter_group(self, operation, item, where, indent):
        params = [self.resolve(p) for p in item.get("parameters", []) + operation.get("parameters", [])]
        params = [p for p in params if p.get("in") == where]
        if not params:
            return "Record<string, never>"
        lines = ["{"]
        for param in params:
            lines += doc_comment(param.get("description"), indent + "  ")
            optional = "" if param.get("required") or where == "path" else "?"
            lines.append(f"{indent}  {key(param['name'])}{optional}: {self.type_of(param.get('schema', {}), indent + '  ')};")
        return "\n".join(lines + [indent + "}"])

    def body_type(self, operation, indent):
        body = self.resolve(operation.get("requestBody"))
        if not body:
            return "never"
        content = body.get("content", {})
        types = [self.type_of(media.get("schema", {}), indent) for kind, media in content.items() if kind == "application/json"]
        if any(kind.startswith(TEXT_TYPES) for kind in content):
            types.append("string")
        kind = union(types) if types else "unknown"
        return kind if body.get("required") else f"{grouped(kind)} | undefined"

    def response_type(self, operation, indent):
        """The answer of the lowest 2xx status: its JSON schema, `string` for a text answer,
        `void` for none."""
        statuses = sorted(code for code in operation.get("responses", {}) if str(code).startswith("2"))
        if not statuses:
            return "void"
        response = self.resolve(operation["responses"][statuses[0]])
        content = response.get("content") or {}
        if "application/json" in content:
            return self.type_of(content["application/json"].get("schema", {}), indent)
        return "string" if content else "void"

    def run(self, version):
        names = list(self.schemas)
        for name in names:
            if not IDENTIFIER.match(name):
                raise SystemExit(f"schema name {name!r} is no TypeScript identifier")
        out = ["// The OpenAPI document's schemas and operations as TypeScript types (generated by",
               "// typescript/tools/generate_types.py from OpenAPI/todaysim.yaml: edit that document, then",
               "// run the tool; do not edit this file).", "",
               "/** The package's version: the repository's VERSION, as package.json says it. */",
               f"export const VERSION = {literal(version)};", "",
               "/** Every schema of the document, in its order. */",
               "export const SCHEMAS = ["] + [f"  {literal(name)}," for name in names] + ["] as const;", ""]
        for name, schema in self.schemas.items():
            out += doc_comment(schema.get("description") if isinstance(schema, dict) else None, "")
            out.append(f"export type {name} = {self.type_of(schema, '')};")
            out.append("")
        operations = self.operations()
        out += ["/** Every operation of the document: its HTTP method and path template. */",
                "export const OPERATIONS = {"]
        out += [f"  {op_id}: {{ method: {literal(method)}, path: {literal(path)} }}," for op_id, method, path, _, _ in operations]
        out += ["} as const;", "", "export type OperationId = keyof typeof OPERATIONS;", "",
                "/** Per operation: its path parameters, query, headers, body (`never`: none) and answer",
                " * (the JSON of its lowest 2xx status; `string` for a text answer, `void` for none). */",
                "export interface Operations {"]
        for op_id, _, _, operation, item in operations:
            out += doc_comment(operation.get("summary"), "  ")
            out += [f"  {op_id}: {{",
                    f"    path: {self.parameter_group(operation, item, 'path', '    ')};",
                    f"    query: {self.parameter_group(operation, item, 'query', '    ')};",
                    f"    headers: {self.parameter_group(operation, item, 'header', '    ')};",
                    f"    body: {self.body_type(operation, '    ')};",
                    f"    response: {self.response_type(operation, '    ')};",
                    "  };"]
        out.append("}")
        out += self.operation_aliases(operations)
        return "\n".join(out) + "\n"

    def operation_aliases(self, operations):
        """A name for each operation's JSON body and successful JSON answer that is a schema of its
        own, as python/tools/generate_models.py names them: `<OperationId>Request` (a body that is
        JSON only) and `<OperationId>Response` (an object answer), e.g. `StepsResponse`."""
        out = []
        for op_id, _, _, operation, _ in operations:
            stem = op_id[:1].upper() + op_id[1:]
            content = (self.resolve(operation.get("requestBody")) or {}).get("content", {})
            body = content.get("application/json", {}).get("schema") if list(content) == ["application/json"] else None
            if isinstance(body, dict) and "$ref" not in body:
                out += ["", f"/** The body of `{op_id}`. */",
                        f"export type {stem}Request = Exclude<Operations[{literal(op_id)}][\"body\"], undefined>;"]
            statuses = sorted(code for code in operation.get("responses", {}) if str(code).startswith("2"))
            answer = self.resolve(operation["responses"][statuses[0]]) if statuses else {}
            schema = (answer.get("content") or {}).get("application/json", {}).get("schema")
            if isinstance(schema, dict) and "$ref" not in schema and schema.get("properties"):
                out += ["", f"/** The answer of `{op_id}`. */", f"export type {stem}Response = Operations[{literal(op_id)}][\"response\"];"]
        names = [line.split()[2] for line in out if line.startswith("export type ")]
        clashes = [name for name in names if name in self.schemas]
        if clashes:
            raise SystemExit(f"an operation's type is named as a schema: {clashes}")
        return out


def package_json_with(version):
    """package.json's text with its `version` set to `version` (the rest of the file untouched)."""
    text = open(PACKAGE_JSON, encoding="utf-8").read()
    changed, count = re.subn(r'^(  "version": )"[^"]*"', lambda m: f'{m.group(1)}{literal(version)}', text, count=1, flags=re.M)
    if count != 1:
        raise SystemExit(f'{PACKAGE_JSON} has no top-level "version" line to set')
    return changed


def main(argv):
    if argv[:1] == ["--to-json"]:
        source = argv[1] if len(argv) > 1 else "-"
        text = sys.stdin.read() if source == "-" else open(source, encoding="utf-8").read()
        import yaml
        json.dump(yaml.safe_load(text), sys.stdout)
        return 0
    check = "--check" in argv
    paths = [arg for arg in argv if not arg.startswith("--")]
    version = open(VERSION_FILE, encoding="utf-8").read().strip()
    generator = Generator(load_document(paths[0] if paths else None))
    text = generator.run(version)
    tool = "python3 typescript/tools/generate_types.py"
    failed = write_or_check(OUTPUT, text, check, tool,
                            f"{len(generator.schemas)} schemas, {len(generator.operations())} operations")
    failed |= write_or_check(BRIDGE_OUTPUT, bridge_module(generator.schemas, doc_comment), check, tool,
                             "the bridge contract's message types")
    failed |= write_or_check(PACKAGE_JSON, package_json_with(version), check, tool, f"version {version}")
    return failed


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
