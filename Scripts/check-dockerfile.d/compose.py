"""The docker-compose.yml half of Scripts/check-dockerfile: reads the file (the subset of YAML
compose files are written in: no YAML library on a fresh machine) and checks

- every service compose builds has a healthcheck on /healthz at the image's port, not disabled;
- no two services publish the same host port (`--profile postgres up` starts them together);
- the profile `postgres`: a `postgres` image pinned to a major version, its data in a volume,
  a health check `pg_isready` over TCP (on a fresh volume the image first runs a temporary
  server on its Unix socket alone, which a socket probe calls ready); and a todaysim it builds
  whose `--db` (or TODAYSIM_DB) is a postgres:// URI naming that service, without a password
  (it would show in `docker inspect` and ps: libpq reads PGPASSWORD), started only once the
  database is healthy (depends_on … condition: service_healthy).
- the profile `cluster` (a fleet, docs/FLEET.md): the same for its database and at
  least two replicas, whose health check is readiness (/readyz: a replica whose database is out
  of reach or that is draining is taken out) instead of /healthz; an nginx service that mounts
  deploy/ (its configuration) and starts once every replica is healthy.
"""
import json
import os
import re
import urllib.parse

PROFILE = "postgres"
CLUSTER = "cluster"


def _scalar(text):
    """A YAML scalar or flow sequence, as compose files write them."""
    text = re.sub(r"\s+#.*$", "", text) if not text.startswith(("'", '"', "[")) else text
    if text.startswith("["):
        try:
            return json.loads(text)
        except ValueError:
            return [_scalar(item.strip()) for item in text.strip("[]").split(",") if item.strip()]
    if text.startswith('"'):
        return json.loads(text)
    if text.startswith("'"):
        return text[1:-1].replace("''", "'")
    return {"true": True, "false": False, "": None}.get(text, text)


def parse(text):
    """Nested dicts and lists from block-style YAML (mappings, `- item` sequences of scalars)."""
    lines = [(len(line) - len(line.lstrip()), line.strip()) for line in text.split("\n")
             if line.strip() and not line.lstrip().startswith("#")]

    def block(index, indent):
        if index < len(lines) and lines[index][1].startswith("- "):
            items = []
            while index < len(lines) and lines[index][0] == indent and lines[index][1].startswith("- "):
                items.append(_scalar(lines[index][1][2:].strip()))
                index += 1
            return items, index
        mapping = {}
        while index < len(lines) and lines[index][0] == indent:
            key, _, rest = lines[index][1].partition(":")
            index += 1
            if rest.strip():
                mapping[key.strip()] = _scalar(rest.strip())
            elif index < len(lines) and lines[index][0] > indent:
                mapping[key.strip()], index = block(index, lines[index][0])
            else:
                mapping[key.strip()] = None
        return mapping, index

    return block(0, lines[0][0])[0] if lines else {}


def _words(value):
    return value if isinstance(value, list) else str(value or "").split()


def _health_test(service):
    check = service.get("healthcheck") or {}
    if not isinstance(check, dict) or check.get("disable") is True:
        return []
    return _words(check.get("test"))


def _database(service):
    """The --db a service's todaysim is given (TODAYSIM_DB when no --db)."""
    command = _words(service.get("command"))
    for index, word in enumerate(command):
        if word == "--db" and index + 1 < len(command):
            return command[index + 1]
        if word.startswith("--db="):
            return word[len("--db="):]
    environment = service.get("environment") or {}
    return environment.get("TODAYSIM_DB") if isinstance(environment, dict) else None


def _host_ports(service):
    ports = []
    for mapping in service.get("ports") or []:
        parts = str(mapping).split(":")
        if len(parts) >= 2:
            ports.append(":".join(parts[:-1]))
    return ports


def check_compose(path, port, probes_healthz, problems):
    name = os.path.basename(path)
    with open(path, encoding="utf-8") as file:
        services = parse(file.read()).get("services") or {}
    published = {}
    for service, body in services.items():
        probe = " ".join(_health_test(body))
        if "build" in body and CLUSTER in _words(body.get("profiles")):
            if re.search(rf"//(127\.0\.0\.1|localhost):{port}/readyz\b", probe) is None:
                problems.append(f"{name}: replica {service} has no healthcheck on /readyz at port {port} (readiness)")
        elif "build" in body and not probes_healthz(probe, port):
            problems.append(f"{name}: service {service} has no healthcheck on /healthz at port {port}")
        for host_port in _host_ports(body):
            if host_port in published:
                problems.append(f"{name}: services {published[host_port]} and {service} both publish {host_port}")
            published[host_port] = service
    check_postgres_profile(name, services, problems, PROFILE)
    check_postgres_profile(name, services, problems, CLUSTER)
    check_cluster(name, services, problems)


def check_cluster(name, services, problems):
    replicas = [service for service, body in services.items()
                if "build" in body and CLUSTER in _words(body.get("profiles"))]
    if len(replicas) < 2:
        problems.append(f"{name}: the `{CLUSTER}` profile runs {len(replicas)} todaysim replicas, not several")
    balancers = {service: body for service, body in services.items() if CLUSTER in _words(body.get("profiles"))
                 and str(body.get("image", "")).rpartition("/")[2].partition(":")[0] == "nginx"}
    if not balancers:
        problems.append(f"{name}: no service of the `{CLUSTER}` profile runs the nginx image")
    for service, body in balancers.items():
        if not any(str(volume).startswith("./deploy:") for volume in body.get("volumes") or []):
            problems.append(f"{name}: service {service} does not mount ./deploy (deploy/nginx.conf)")
        needs = body.get("depends_on") if isinstance(body.get("depends_on"), dict) else {}
        for replica in replicas:
            if ((needs.get(replica) or {}).get("condition")) != "service_healthy":
                problems.append(f"{name}: service {service} must wait for {replica} with condition: service_healthy")


def check_postgres_profile(name, services, problems, profile):
    profiled = {service: body for service, body in services.items() if profile in _words(body.get("profiles"))}
    databases = {service: body for service, body in profiled.items()
                 if str(body.get("image", "")).rpartition("/")[2].partition(":")[0] == "postgres"}
    if not databases:
        problems.append(f"{name}: no service of the `{profile}` profile runs the postgres image")
    for service, body in databases.items():
        tag = str(body["image"]).partition(":")[2]
        if not re.match(r"\d+(\b|$)", tag):
            problems.append(f"{name}: service {service}: pin the postgres image to a major version (postgres:15), not {body['image']!r}")
        if not any(str(volume).rstrip("/").endswith(":/var/lib/postgresql/data") for volume in body.get("volumes") or []):
            problems.append(f"{name}: service {service} keeps its data in no volume at /var/lib/postgresql/data")
        test = _health_test(body)
        over_tcp = any(word in ("127.0.0.1", "localhost") or re.match(r"--host=(127\.0\.0\.1|localhost)$", word) for word in test)
        if not any("pg_isready" in word for word in test) or not over_tcp:
            problems.append(f"{name}: service {service} has no healthcheck `pg_isready -h 127.0.0.1` (over TCP)")
    servers = {service: body for service, body in profiled.items() if "build" in body}
    if not servers:
        problems.append(f"{name}: the `{profile}` profile builds no todaysim")
    for service, body in servers.items():
        uri = _database(body) or ""
        parts = urllib.parse.urlsplit(uri)
        if parts.scheme not in ("postgres", "postgresql") or parts.hostname not in databases:
            problems.append(f"{name}: service {service}: --db {uri!r} must be a postgres:// URI whose host is "
                            f"the database service ({', '.join(databases) or 'none'})")
            continue
        if parts.password is not None:
            problems.append(f"{name}: service {service}: the password is in --db (docker inspect shows it); set PGPASSWORD")
        condition = ((body.get("depends_on") or {}).get(parts.hostname) or {}) if isinstance(body.get("depends_on"), dict) else {}
        if condition.get("condition") != "service_healthy":
            problems.append(f"{name}: service {service} must depend on {parts.hostname} with condition: service_healthy")
