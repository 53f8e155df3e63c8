"""Editor settings: flat or under mcpNotebook, bad values rejected with a message, the rest kept."""

from __future__ import annotations

from lsp_bridge.settings import BridgeSettings, to_settings


def test_defaults_serve_markdown_and_plain_text_with_a_slash() -> None:
    settings = BridgeSettings()
    assert settings.trigger == "/"
    assert settings.applies_to("markdown") and settings.applies_to("plaintext")
    assert not settings.applies_to("python") and not settings.applies_to(None)


def test_options_are_read_flat_or_under_the_section() -> None:
    flat, _ = to_settings({"trigger": "#", "maxItems": 20})
    nested, _ = to_settings({"mcpNotebook": {"trigger": "#", "maxItems": 20}})
    assert flat == nested == BridgeSettings(trigger="#", max_items=20)


def test_star_serves_every_language() -> None:
    settings, problems = to_settings({"fileTypes": "*"})
    assert problems == ()
    assert settings.applies_to("python") and settings.applies_to(None)
    listed, _ = to_settings({"fileTypes": ["python", "*"]})
    assert listed.applies_to("rust")


def test_all_options_are_understood() -> None:
    settings, problems = to_settings(
        {
            "trigger": "//",
            "fileTypes": ["markdown", "python"],
            "images": "data-uri",
            "maxItems": 50,
            "diagnostics": False,
            "diagnosticsDelay": 0,
        }
    )
    assert problems == ()
    assert settings == BridgeSettings(
        trigger="//",
        file_types=frozenset({"markdown", "python"}),
        images="data-uri",
        max_items=50,
        diagnostics=False,
        diagnostics_delay=0.0,
    )


def test_bad_values_keep_the_previous_setting_and_say_why() -> None:
    base = BridgeSettings(trigger="#")
    settings, problems = to_settings(
        {"trigger": "a b", "maxItems": 0, "images": "inline", "diagnostics": "yes", "fileTypes": 3}, base
    )
    assert settings == base
    assert len(problems) == 5
    assert problems[0] == "mcpNotebook.trigger must be one to three non-space characters; keeping '#'"


def test_unknown_keys_and_non_objects_change_nothing() -> None:
    assert to_settings({"other": 1}) == (BridgeSettings(), ())
    assert to_settings(None) == (BridgeSettings(), ())
    assert to_settings(["x"]) == (BridgeSettings(), ())
