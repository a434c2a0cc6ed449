"""The docker-compose.yml half of support/dockerfile.py (formerly `check-dockerfile.d/compose.py`):

- every service compose builds has a healthcheck on /healthz at the image's port, not disabled;
- no two services publish the same host port (`--profile postgres up` starts them together);
- the profile `postgres`: a `postgres` image pinned to a major version, its data in a volume,
  a health check `pg_isready` over TCP (on a fresh volume the image first runs a temporary
  server on its Unix socket alone, which a socket probe calls ready); and a todaysim it builds
  whose `--db` (or TODAYSIM_DB) is a postgres:// URI naming that service, without a password
  (it would show in `docker inspect` and ps: libpq reads PGPASSWORD), started only once the
  database is healthy (depends_on … condition: service_healthy).
- the profile `cluster` (a fleet, docs/FLEET.md): the same for its database and at least two
  replicas, whose health check is readiness (/readyz: a replica whose database is out of reach
  or that is draining is taken out) instead of /healthz; an nginx service that mounts deploy/
  (its configuration) and starts once every replica is healthy."""
from __future__ import annotations

import os
import re
import urllib.parse
from typing import Any, Optional

import yaml

PROFILE = "postgres"
CLUSTER = "cluster"


def probes(text: str, port: Optional[str], path: str) -> bool:
    """Whether a health check command asks `/path` on `port` of the container itself."""
    return re.search(rf"//(127\.0\.0\.1|localhost):{port}/{path}\b", text) is not None


def _words(value: Any) -> list[str]:
    return [str(word) for word in value] if isinstance(value, list) else str(value or "").split()


def _mapping(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _health_test(service: dict[str, Any]) -> list[str]:
    check = service.get("healthcheck") or {}
    if not isinstance(check, dict) or check.get("disable") is True:
        return []
    return _words(check.get("test"))


def _database(service: dict[str, Any]) -> Optional[str]:
    """The --db a service's todaysim is given (TODAYSIM_DB when no --db)."""
    command = _words(service.get("command"))
    for index, word in enumerate(command):
        if word == "--db" and index + 1 < len(command):
            return command[index + 1]
        if word.startswith("--db="):
            return word[len("--db="):]
    value = _mapping(service.get("environment")).get("TODAYSIM_DB")
    return None if value is None else str(value)


def _host_ports(service: dict[str, Any]) -> list[str]:
    ports = []
    for mapping in service.get("ports") or []:
        parts = str(mapping).split(":")
        if len(parts) >= 2:
            ports.append(":".join(parts[:-1]))
    return ports


def _image(body: dict[str, Any]) -> str:
    return str(body.get("image", "")).rpartition("/")[2].partition(":")[0]


def check_compose(path: str, port: Optional[str], problems: list[str]) -> None:
    name = os.path.basename(path)
    with open(path, encoding="utf-8") as file:
        services = {service: _mapping(body) for service, body in _mapping(_mapping(yaml.safe_load(file)).get("services")).items()}
    published: dict[str, str] = {}
    for service, body in services.items():
        probe = " ".join(_health_test(body))
        if "build" in body and CLUSTER in _words(body.get("profiles")):
            if not probes(probe, port, "readyz"):
                problems.append(f"{name}: replica {service} has no healthcheck on /readyz at port {port} (readiness)")
        elif "build" in body and not probes(probe, port, "healthz"):
            problems.append(f"{name}: service {service} has no healthcheck on /healthz at port {port}")
        for host_port in _host_ports(body):
            if host_port in published:
                problems.append(f"{name}: services {published[host_port]} and {service} both publish {host_port}")
            published[host_port] = service
    check_postgres_profile(name, services, problems, PROFILE)
    check_postgres_profile(name, services, problems, CLUSTER)
    check_cluster(name, services, problems)


def check_cluster(name: str, services: dict[str, dict[str, Any]], problems: list[str]) -> None:
    replicas = [service for service, body in services.items() if "build" in body and CLUSTER in _words(body.get("profiles"))]
    if len(replicas) < 2:
        problems.append(f"{name}: the `{CLUSTER}` profile runs {len(replicas)} todaysim replicas, not several")
    balancers = {service: body for service, body in services.items()
                 if CLUSTER in _words(body.get("profiles")) and _image(body) == "nginx"}
    if not balancers:
        problems.append(f"{name}: no service of the `{CLUSTER}` profile runs the nginx image")
    for service, body in balancers.items():
        if not any(str(volume).startswith("./deploy:") for volume in body.get("volumes") or []):
            problems.append(f"{name}: service {service} does not mount ./deploy (deploy/nginx.conf)")
        needs = _mapping(body.get("depends_on"))
        for replica in replicas:
            if _mapping(needs.get(replica)).get("condition") != "service_healthy":
                problems.append(f"{name}: service {service} must wait for {replica} with condition: service_healthy")


def check_postgres_profile(name: str, services: dict[str, dict[str, Any]], problems: list[str], profile: str) -> None:
    profiled = {service: body for service, body in services.items() if profile in _words(body.get("profiles"))}
    databases = {service: body for service, body in profiled.items() if _image(body) == "postgres"}
    if not databases:
        problems.append(f"{name}: no service of the `{profile}` profile runs the postgres image")
    for service, body in databases.items():
        tag = str(body["image"]).partition(":")[2]
        if not re.match(r"\d+(\b|$)", tag):
            problems.append(f"{name}: service {service}: pin the postgres image to a major version (postgres:15), "
                            f"not {body['image']!r}")
        if not any(str(volume).rstrip("/").endswith(":/var/lib/postgresql/data") for volume in body.get("volumes") or []):
            problems.append(f"{name}: service {service} keeps its data in no volume at /var/lib/postgresql/data")
        test = _health_test(body)
        over_tcp = any(word in ("127.0.0.1", "localhost") or re.match(r"--host=(127\.0\.0\.1|localhost)$", word)
                       for word in test)
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
        if _mapping(_mapping(body.get("depends_on")).get(parts.hostname)).get("condition") != "service_healthy":
            problems.append(f"{name}: service {service} must depend on {parts.hostname} with condition: service_healthy")
