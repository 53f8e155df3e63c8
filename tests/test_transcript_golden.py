"""Every front end shows every case of the table as it always has (tests/golden/transcripts.json).

The golden file was written from the front ends' own renderers before they
shared one; a change to what users see must change the file on purpose
(`python tests/transcript_cases.py`) and say why in the commit.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from transcript_cases import (
    CASES,
    CODE_CELLS,
    GOLDEN,
    cli_render_output,
    code_cell_text,
    front_end_outputs,
    recorded,
    write_prompt_folder,
)

_GOLDEN: dict[str, Any] = json.loads(GOLDEN.read_text(encoding="utf-8"))


def test_the_golden_file_has_every_case() -> None:
    assert sorted(_GOLDEN["prompts"]) == sorted(CASES)
    assert sorted(_GOLDEN["code cells"]) == sorted(CODE_CELLS)


@pytest.fixture(scope="module")
def prompt_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_prompt_folder(tmp_path_factory.mktemp("golden") / "prompts")


@pytest.mark.parametrize("case", sorted(CASES))
def test_every_front_end_shows_the_case_as_before(
    case: str, prompt_folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    rendered = CASES[case]
    outputs = front_end_outputs(rendered, cli_render_output(rendered, prompt_folder, monkeypatch))
    assert {front_end: recorded(text) for front_end, text in outputs.items()} == _GOLDEN["prompts"][case]


@pytest.mark.parametrize("case", sorted(CODE_CELLS))
def test_a_code_cell_publishes_the_fenced_text_as_before(case: str) -> None:
    assert code_cell_text(*CODE_CELLS[case]) == _GOLDEN["code cells"][case]
