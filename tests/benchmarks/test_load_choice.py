"""Which load generator `bench_http` takes: the leanest it can run, saying why when it cannot build `load.c`."""

from __future__ import annotations

import shutil

import pytest

from benchmarks import bench_http


@pytest.fixture
def unbuilt(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(bench_http, "_built", [])  # nothing built yet in this process


@pytest.mark.parametrize(
    ("compiler", "why"),
    [(None, "load.c needs Linux and a C compiler"), (shutil.which("false"), "could not build")],
    ids=["no-compiler", "a-failing-compiler"],
)
def test_auto_falls_back_to_the_next_generator_and_says_why(
    unbuilt: None,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    compiler: str | None,
    why: str,
) -> None:
    monkeypatch.setattr(bench_http, "_compiler", lambda: compiler)
    monkeypatch.setattr(bench_http.shutil, "which", lambda name: None)  # no wrk either
    assert bench_http.load_generator("auto") == "python"
    said = capsys.readouterr().err
    assert why in said and "the load generator is python" in said


def test_asking_for_load_c_where_it_cannot_be_built_stops_saying_why(
    unbuilt: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(bench_http, "_compiler", lambda: None)
    with pytest.raises(SystemExit, match=r"--load c: load\.c needs Linux and a C compiler"):
        bench_http.load_generator("c")
