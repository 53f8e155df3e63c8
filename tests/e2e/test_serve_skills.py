"""Skills (the Skills extension) served by real `mcp-notebook serve` processes, over stdio and HTTP, both eras.

A client lists the skills, reads every file of one and checks each against the entry's digest and size, as a host
must; a file saved in a skill folder is announced as a resource list change and the next entry has its new digest.
"""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

import httpx2
import pytest
from e2e_processes import MODERN, RawHttpSession, StdioServer
from served_http import ServedHttp

pytestmark = pytest.mark.slow

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
SKILLS = "io.modelcontextprotocol/skills"


def sha(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    served = tmp_path / "served"
    shutil.copytree(EXAMPLES / "skills", served)
    shutil.copy(EXAMPLES / "skill_notebook.ipynb", served / "skill_notebook.ipynb")
    return served


@pytest.mark.parametrize("modern", [False, True], ids=["2025-11-25", MODERN])
def test_over_stdio_every_listed_file_reads_back_as_its_digest_says(folder: Path, modern: bool) -> None:
    with StdioServer([str(folder), "--no-cache"]) as server:
        if modern:
            capabilities = server.request("server/discover", modern=True)["result"]["capabilities"]
        else:
            capabilities = server.initialize("2025-11-25")["result"]["capabilities"]
        assert capabilities["extensions"][SKILLS] == {"directoryRead": True}
        listed = server.request("skills/list", modern=modern)["result"]
        uris = [entry["uri"] for entry in listed["skills"]]
        assert uris == ["skill://code-review/SKILL.md", "skill://plot-csv/SKILL.md"]
        assert ("ttlMs" in listed) == modern
        for entry in listed["skills"]:
            for item in entry["resources"]:
                contents = server.request("resources/read", {"uri": item["uri"]}, modern=modern)["result"]["contents"]
                data = contents[0]["text"].encode("utf-8")
                assert (sha(data), len(data)) == (item["digest"], item["size"]), item["uri"]


@pytest.mark.parametrize("watch", [(), ("--poll", "0.2")], ids=["kernel events", "polling"])
def test_over_stdio_a_saved_skill_file_is_announced_and_the_next_entry_has_its_digest(
    folder: Path, watch: tuple[str, ...]
) -> None:
    with StdioServer([str(folder), "--no-cache", *watch]) as server:
        server.initialize("2025-11-25")
        before = server.request("skills/get", {"uri": "skill://code-review/SKILL.md"})["result"]["skill"]
        added = b"# Style\n\nShort names.\n"
        (folder / "code-review" / "references" / "style.md").write_bytes(added)
        server.notification("notifications/resources/list_changed")
        after = server.request("skills/get", {"uri": "skill://code-review/SKILL.md"})["result"]["skill"]
    assert len(after["resources"]) == len(before["resources"]) + 1
    assert {"uri": "skill://code-review/references/style.md", "digest": sha(added), "size": len(added)} in after[
        "resources"
    ]


@pytest.mark.parametrize("revision", ["2025-11-25", MODERN])
async def test_over_http_entries_reads_and_directories_answer_in_both_eras(folder: Path, revision: str) -> None:
    with ServedHttp([folder], "--no-cache") as served:
        async with httpx2.AsyncClient() as http:
            session = RawHttpSession(http, served.url, revision)
            opened = await session.open()
            if opened is not None:
                assert opened["result"]["capabilities"]["extensions"][SKILLS] == {"directoryRead": True}
            listed = (await session.request("skills/list"))["result"]
            entry = (await session.request("skills/get", {"uri": "skill://plot-csv/SKILL.md"}))["result"]
            scripts = await session.request("resources/directory/read", {"uri": "skill://plot-csv/scripts"})
            unknown = await session.request("skills/get", {"uri": "skill://nope/SKILL.md"})
            text = (await session.request("resources/read", {"uri": "skill://plot-csv/SKILL.md"}))["result"]
    assert [e["uri"] for e in listed["skills"]] == ["skill://code-review/SKILL.md", "skill://plot-csv/SKILL.md"]
    assert entry["skill"] == listed["skills"][1]
    assert [r["name"] for r in scripts["result"]["resources"]] == ["step-1.py", "step-2.py"]
    assert unknown["error"]["code"] == -32602
    skill_md = text["contents"][0]["text"].encode("utf-8")
    assert sha(skill_md) == entry["skill"]["resources"][0]["digest"]
    assert ("cacheScope" in listed and "cacheScope" in entry) == (revision == MODERN)
