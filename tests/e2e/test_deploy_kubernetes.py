"""The shipped Kubernetes manifests pass a schema check, and the commands they run are ones `serve` takes.

The schemas are those `kubernetes-validate` ships for each Kubernetes release
(no cluster, no network); strict: a misspelt field is an error, not ignored.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import kubernetes_validate
import pytest
import yaml

from mcp_notebook.cli import build_parser
from mcp_notebook.transports.gate import READY_PATH

DEPLOY = Path(__file__).resolve().parents[2] / "examples" / "deploy"
MANIFESTS = ("kubernetes.yaml", "kubernetes-git-sync.yaml")
# The newest release the validator knows, and the oldest still maintained upstream when this was written.
VERSIONS = (kubernetes_validate.latest_version(), "1.31.0")


def _documents(name: str) -> list[dict[str, Any]]:
    return [document for document in yaml.safe_load_all((DEPLOY / name).read_text()) if document]


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("name", MANIFESTS)
def test_every_resource_of_the_manifest_passes_the_schema_check(name: str, version: str) -> None:
    documents = _documents(name)
    assert [document["kind"] for document in documents] == ["Deployment", "Service"]
    for document in documents:
        kubernetes_validate.validate(document, version, strict=True)  # raises ValidationError with the path


def test_the_schema_check_fails_on_a_misspelt_field() -> None:
    deployment = _documents("kubernetes.yaml")[0]
    deployment["spec"]["replica"] = deployment["spec"].pop("replicas")
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(deployment, VERSIONS[0], strict=True)


def _server(document: dict[str, Any]) -> dict[str, Any]:
    containers = document["spec"]["template"]["spec"]["containers"]
    server: dict[str, Any] = next(c for c in containers if c["name"] == "mcp-notebook")
    return server


@pytest.mark.parametrize("name", MANIFESTS)
def test_the_container_runs_a_command_serve_accepts_and_probes_its_readiness(name: str) -> None:
    deployment, service = _documents(name)
    server = _server(deployment)
    command = server["command"]
    assert command[:2] == ["mcp-notebook", "serve"]
    args = build_parser().parse_args(command[1:])
    assert (args.http, args.host, args.port, args.allow_remote) == (True, "0.0.0.0", 8765, True)
    assert {"name": "http", "containerPort": args.port} in server["ports"]
    assert server["readinessProbe"]["httpGet"] == {"path": READY_PATH, "port": "http"}
    assert service["spec"]["ports"][0]["targetPort"] == "http"
    assert service["spec"]["selector"] == deployment["spec"]["template"]["metadata"]["labels"]


def test_the_git_sync_replicas_serve_the_link_git_sync_swaps() -> None:
    deployment = _documents("kubernetes-git-sync.yaml")[0]
    pod = deployment["spec"]["template"]["spec"]
    syncs = [*pod["initContainers"], *(c for c in pod["containers"] if c["name"] == "git-sync")]
    for sync in syncs:
        assert "--root=/git" in sync["args"]
        assert "--link=current" in sync["args"]
    served = build_parser().parse_args(_server(deployment)["command"][1:]).paths
    assert served == ["/git/current"]
