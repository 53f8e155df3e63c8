"""A picker form for this kernel's own `NAME:var` arguments sends the variable's name; the server reads its value."""

from __future__ import annotations

from IPython.core.interactiveshell import InteractiveShell

from mcp_notebook.ipython.widgets import _resolve_value, _with_references, to_get_code


def test_at_name_in_a_kernel_variable_field_sends_the_name_and_elsewhere_the_value() -> None:
    shell = InteractiveShell.instance()
    shell.user_ns["wv_sales"] = [1, 2]
    try:
        assert _resolve_value(shell, "df", "@wv_sales", ("df",)) == "wv_sales"  # the kernel's server reads it
        assert _resolve_value(shell, "df", "wv_sales", ("df",)) == "wv_sales"
        assert _resolve_value(shell, "code", "@wv_sales", ("df",)) == "[1, 2]"  # any other argument: the value
        assert _resolve_value(shell, "df", "@@wv_sales", ("df",)) == "@wv_sales"
    finally:
        del shell.user_ns["wv_sales"]


def test_copied_code_passes_a_kernel_variable_as_at_name_so_a_cell_sends_the_value() -> None:
    write = _with_references(to_get_code, ("df",))

    assert write("this_kernel", "explain", {"df": "sales", "style": "short"}) == (
        "%mcp get this_kernel:explain df=@sales style=short"
    )
    assert write("this_kernel", "explain", {"df": "@sales"}) == "%mcp get this_kernel:explain df=@sales"
