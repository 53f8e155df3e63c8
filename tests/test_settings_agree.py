"""One declaration of every option (`mcp_notebook/settings.py`): the flags, the variables and the traitlets agree.

Each option that is on more than one surface has the same name there (by the
rule, or a departure that says why), the same default (or a per-surface one
that says why) and the same check: a value one surface refuses, the others
refuse with the same words.
"""

from __future__ import annotations

import argparse
import dataclasses
from typing import Any

import pytest

from mcp_notebook import settings
from mcp_notebook.asgi import ServeSettings
from mcp_notebook.cli import build_parser, main
from mcp_notebook.jupyter.app import MCPNotebook
from mcp_notebook.service import ServiceSettings
from mcp_notebook.transports.limits import HttpLimits

# Texts each kind is tried with: some accepted, some refused.
SAMPLES: dict[str, tuple[str, ...]] = {
    "int": ("0", "1", "7", "-3", "1.5", "many", " 12 ", "9" * 5000, "-" + "9" * 5000, "1000000001"),
    "float": ("0", "-1", "0.5", "2", "inf", "-inf", "nan", "soon", "1e3", "1e-300", "9" * 5000, "1e9"),
    "str": ("team", "x y"),
    "names": ("svc", "svc,svc.ns:80", " a , b "),
    "paths": ("a", "a" + __import__("os").pathsep + "b"),
}
TYPED: dict[str, tuple[Any, ...]] = {
    "int": (0, 1, 7, -3, 10**9 + 1),
    "float": (0.0, -1.0, 0.5, 2.0, float("inf"), float("nan"), 1e-300),
    "bool": (True, False),
    "str": ("team", "  "),
}


def _serve_actions() -> dict[str, argparse.Action]:
    parser = build_parser("serve")
    (serve,) = parser.subcommands("serve")
    return {action.dest: action for action in serve._actions}


def _cli_read(action: argparse.Action, text: str) -> tuple[bool, Any]:
    assert callable(action.type)
    try:
        return True, action.type(text)
    except argparse.ArgumentTypeError as error:
        message = str(error)
        assert message.endswith(f", got {settings.shown(text)}"), message  # the same words as the variable's
        return False, message.removesuffix(f", got {settings.shown(text)}")


def _env_read(option: settings.Option, text: str) -> tuple[bool, Any]:
    try:
        return True, settings.from_env([option.name], {option.env: text})[option.name]
    except ValueError as error:
        message = str(error)
        assert message.startswith(option.env + " "), message
        assert message.endswith(f", got {settings.shown(text.strip())}"), message
        return False, message.removeprefix(option.env + " ").removesuffix(f", got {settings.shown(text.strip())}")


def test_every_option_is_named_by_the_rule_or_says_why_not() -> None:
    for option in settings.OPTIONS:
        derived = option.name.replace("_", "-")
        ruled = f"--no-{derived}" if option.kind.name == "bool" and option.default is True else f"--{derived}"
        departs = (
            (settings.CLI in option.surfaces and option.flag != ruled)
            or (settings.JUPYTER in option.surfaces and option.trait != option.name)
            or option.surfaces != {settings.CLI, settings.ENV, settings.JUPYTER}
            or option.defaults
        )
        assert option.env == "MCP_NOTEBOOK_" + option.name.upper()
        assert not departs or option.why, f"{option.name} departs from the rule without saying why"


def test_the_flags_of_serve_are_the_declared_options() -> None:
    actions = _serve_actions()
    for option in settings.on(settings.CLI):
        action = actions[option.name]
        if option.name == "paths":
            assert action.option_strings == [] and action.nargs == "+"
            continue
        assert action.option_strings == [option.flag], option.name
        words = option.flag_help or (option.off if option.default is True else None) or option.help
        assert (action.help or "").startswith(words), option.name
    declared = {option.name for option in settings.on(settings.CLI)}
    switches = {"help", "http", "token_file", "allow_remote", "verbose", "run"}  # the command's own, not settings
    assert {dest for dest in actions if dest not in switches} == declared


def test_the_traitlets_of_the_jupyter_extension_are_the_declared_options() -> None:
    traits = MCPNotebook.class_own_traits(config=True)
    assert set(traits) == {option.trait for option in settings.on(settings.JUPYTER)}
    app = MCPNotebook()
    for option in settings.on(settings.JUPYTER):
        assert getattr(app, option.trait) == option.default_on(settings.JUPYTER), option.name
        assert option.help.split(".")[0][1:40] in (traits[option.trait].help or ""), option.name


def test_the_defaults_agree_with_the_settings_each_host_builds() -> None:
    service = {field.name: field.default for field in dataclasses.fields(ServiceSettings) if field.name != "paths"}
    limits = {field.name: field.default for field in dataclasses.fields(HttpLimits)}
    for name, default in {**service, **limits}.items():
        assert settings.option(name).default == default, name
    assert set(limits) == set(settings.LIMITS)
    # Unset, every variable leaves its declared default; so does every flag not given.
    from_env = ServeSettings.from_env({"MCP_NOTEBOOK_PATHS": "p"})
    for option in settings.on(settings.ENV):
        if option.name in service:
            assert getattr(from_env.service, option.name) == option.default_on(settings.ENV), option.name
        elif option.name in limits:
            assert getattr(from_env.limits, option.name) == option.default_on(settings.ENV), option.name
        elif option.name != "paths":
            assert getattr(from_env, option.name) == option.default_on(settings.ENV), option.name
    from mcp_notebook.commands.serve import serve_settings

    args = build_parser("serve").parse_args(["serve", "p"])
    chosen, http = serve_settings(args)
    for option in settings.on(settings.CLI):
        if option.name in service:
            assert getattr(chosen, option.name) == option.default_on(settings.CLI) or option.cli_reads_env
        elif option.name != "paths" and not option.cli_reads_env:
            assert http[option.name] == option.default_on(settings.CLI), option.name


@pytest.mark.parametrize(
    "option", [option for option in settings.OPTIONS if option.kind.name in SAMPLES], ids=lambda option: option.name
)
def test_a_flag_and_its_variable_read_every_value_alike(option: settings.Option) -> None:
    actions = _serve_actions()
    for text in SAMPLES[option.kind.name]:
        read = option.read  # the declaration itself
        try:
            expected: tuple[bool, Any] = (True, read(text))
        except ValueError as error:
            expected = (False, str(error))
        if settings.ENV in option.surfaces:
            assert _env_read(option, text) == expected, (option.name, text)
        if settings.CLI in option.surfaces and option.name != "paths":
            cli = _cli_read(actions[option.name], text)
            assert cli == expected, (option.name, text)


@pytest.mark.parametrize("option", settings.on(settings.JUPYTER), ids=lambda option: option.name)
def test_a_traitlet_refuses_what_the_flag_and_the_variable_refuse(option: settings.Option) -> None:
    for value in TYPED.get(option.kind.name, ()):
        problem = settings.problem_in_trait(option.name, value)
        text = settings.Flag().write(value) if isinstance(value, bool) else str(value)
        try:
            option.read(text)
            accepted_as_text = True
        except ValueError as error:
            accepted_as_text = False
            assert problem == f"MCPNotebook.{option.trait} {error}, got {value!r}"
        if option.name != "root":
            assert (problem is None) == accepted_as_text, (option.name, value)


def test_one_refusal_in_the_words_of_each_surface(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["serve", ".", "--page-size", "0"])
    assert capsys.readouterr().err == "mcp-notebook: --page-size must be at least 1, got '0'\n"
    with pytest.raises(ValueError, match=r"^MCP_NOTEBOOK_PAGE_SIZE must be at least 1, got '0'$"):
        ServeSettings.from_env({"MCP_NOTEBOOK_PATHS": "p", "MCP_NOTEBOOK_PAGE_SIZE": "0"})
    assert settings.problem_in_trait("page_size", 0) == "MCPNotebook.page_size must be at least 1, got 0"
    with pytest.raises(ValueError, match=r"^page_size must be at least 1, got 0$"):
        ServiceSettings(paths=("p",), page_size=0)


def test_settings_refuse_what_the_declaration_refuses() -> None:
    with pytest.raises(ValueError, match="poll must be a finite number of seconds"):
        ServiceSettings(paths=("p",), poll=float("inf"))
    with pytest.raises(ValueError, match=r"header_timeout must be at least 0\.5 seconds"):
        HttpLimits(header_timeout=0)
    with pytest.raises(ValueError, match="poll says how to watch"):
        ServiceSettings(paths=("p",), watch=False, poll=1.0)


DURATIONS = [option for option in settings.OPTIONS if isinstance(option.kind, settings.Seconds)]


@pytest.mark.parametrize("option", DURATIONS, ids=lambda option: option.name)
def test_every_duration_and_interval_declares_a_sane_minimum_and_refuses_what_is_not_a_time(
    option: settings.Option,
) -> None:
    kind = option.kind
    assert isinstance(kind, settings.Seconds)
    assert kind.least >= 0.1, option.name
    for text in ("nan", "inf", "-inf", "-1", "0", "1e-300", repr(kind.least / 2), "1e9"):
        with pytest.raises(ValueError, match=r"must be (a finite number|at least|at most)"):
            option.read(text)
    assert option.read(repr(kind.least)) == kind.least


def test_a_refused_value_is_repeated_cut_short() -> None:
    digits = "9" * 5000
    with pytest.raises(ValueError) as raised:
        settings.from_env(["page_size"], {"MCP_NOTEBOOK_PAGE_SIZE": digits})
    assert str(raised.value) == (
        f"MCP_NOTEBOOK_PAGE_SIZE must be at most 1000000000, got {digits[:40]!r}… (5,000 characters)"
    )
    assert settings.problem_in_trait("page_size", 10**5000) == (
        "MCPNotebook.page_size must be at most 1000000000, got a number of about 5,001 digits"
    )
    assert settings.shown("x" * 41) == f"{'x' * 40!r}… (41 characters)"
    assert settings.shown(0.5) == "0.5"
