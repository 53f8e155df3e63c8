"""`NAME:var[…]` arguments in a real kernel: a client sends a variable's name, the prompt gets its value.

The kernel runs under jupyter_client as a notebook's kernel does; an SDK
client talks to its `%mcp serve` over HTTP with the token of its connection
file, as Claude Code or VS Code would. A DataFrame arrives as the Markdown
table the README promises, on lines of its own (tabulate is not installed:
the table is written without it); anything but the name of a variable of the
declared type is refused, and nothing a client sends is evaluated.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from kernel_harness import RealKernel
from kernel_server_harness import connect
from mcp import MCPError

pytestmark = pytest.mark.slow

SALES_TABLE = "| region | revenue |\n|---|---:|\n| north | 120.5 |\n| south | 98.0 |"


@pytest.fixture(scope="module")
def kernel(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RealKernel]:
    with RealKernel(tmp_path_factory.mktemp("kernel-variables")) as kernel:
        kernel.execute("%load_ext mcp_notebook")
        kernel.execute(
            "import pandas as pd\n"
            "sales = pd.DataFrame({'region': ['north', 'south'], 'revenue': [120.5, 98.0]})\n"
            "label = 'q3'\n"
            "_private = sales"
        )
        kernel.execute(
            '%%prompt explain --arg df:var[DataFrame]="the table to explain" --optional style=short\n'
            "Explain the columns and the data quality of {{df}}, in a {{style}} answer."
        )
        kernel.execute("%mcp serve")
        yield kernel


async def test_a_dataframe_named_by_a_client_arrives_as_a_markdown_table_on_its_own_lines(kernel: RealKernel) -> None:
    assert kernel.execute("import importlib.util; print(importlib.util.find_spec('tabulate'))").text == "None\n"
    connection = kernel.connection()
    async with connect(connection.url, connection.token) as client:
        completed = await client.complete({"type": "ref/prompt", "name": "explain"}, {"name": "df", "value": "s"})
        assert completed.completion.values == ["sales"]

        rendered = await client.get_prompt("explain", {"df": "sales"})
        assert rendered.messages[0].content.text == (
            f"Explain the columns and the data quality of \n\n{SALES_TABLE}\n\n, in a short answer."
        )
        # The `%mcp get` spelling of a variable works the same.
        again = await client.get_prompt("explain", {"df": "@sales", "style": "long"})
        assert again.messages[0].content.text.endswith(f"{SALES_TABLE}\n\n, in a long answer.")
        # A table already written out (what `%mcp get this_kernel:explain df=@sales` sends) is data: kept as it is.
        written = await client.get_prompt("explain", {"df": f"\n\n{SALES_TABLE}\n\n"})
        assert written.messages[0].content.text == rendered.messages[0].content.text


@pytest.mark.parametrize(
    ("value", "complaint"),
    [
        ("sales.head()", "'sales.head()' is not the name of a DataFrame variable"),
        ("sales[0]", "'sales[0]' is not the name of a DataFrame variable"),
        ("label", "'label' is a str, not a DataFrame; the kernel has sales"),
        ("missing", "the kernel has no variable named 'missing'; the kernel has sales"),
        ("_private", "the kernel has no variable named '_private'"),
    ],
)
async def test_anything_but_a_published_variables_name_is_refused(
    kernel: RealKernel, value: str, complaint: str
) -> None:
    connection = kernel.connection()
    async with connect(connection.url, connection.token) as client:
        with pytest.raises(MCPError) as raised:
            await client.get_prompt("explain", {"df": value})
    assert raised.value.error.code == -32602
    assert raised.value.error.message.startswith("Prompt 'explain', argument 'df': ")
    assert complaint in raised.value.error.message
    assert kernel.execute("print(len(sales))").text == "2\n"  # the kernel is untouched and still serving
