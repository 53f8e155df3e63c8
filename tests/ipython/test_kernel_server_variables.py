"""`NAME:var[…]` arguments in a real kernel: a client sends a variable's name, the prompt gets its value.

The kernel runs under jupyter_client as a notebook's kernel does; an SDK
client talks to its `%mcp serve` over HTTP with the token of its connection
file, as Claude Code or VS Code would. A DataFrame arrives as the Markdown
table the README promises, on lines of its own (tabulate is not installed:
the table is written without it); anything but the name of a variable of the
declared type is refused, and nothing a client sends is evaluated.
"""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest
from kernel_harness import RealKernel
from kernel_server_harness import connect
from mcp import MCPError

from mcp_notebook.ipython.namespace import FORMAT_SECONDS

pytestmark = pytest.mark.slow

# Variables a client may name that must not cost the kernel: a class that is only called DataFrame, an int
# subclass, a 30 MB string, a value whose text is 3 MB, and one whose `__str__` would hold the kernel for a minute.
HOSTILE = """
import time
class DataFrame:
    pass
fake = DataFrame()
n = 3
flag = True
big = "x" * 30_000_000
class Huge:
    def __str__(self):
        return "y" * 3_000_000
huge = Huge()
class Slow:
    def __str__(self):
        time.sleep(60)
        return "late"
slow = Slow()
"""
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
        kernel.execute(HOSTILE)
        kernel.execute(
            '%%prompt explain --arg df:var[pandas.DataFrame]="the table to explain" --optional style=short\n'
            "Explain the columns and the data quality of {{df}}, in a {{style}} answer."
        )
        kernel.execute("%%prompt count --arg n:var[int]\nCount to {{n}}.")
        kernel.execute("%%prompt show --arg v:var\nShow {{v}}.")
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
        ("sales.head()", "'sales.head()' is not the name of a pandas.DataFrame variable"),
        ("sales[0]", "'sales[0]' is not the name of a pandas.DataFrame variable"),
        ("label", "'label' is a str, not a pandas.DataFrame; the kernel has sales"),
        ("fake", "'fake' is a DataFrame, not a pandas.DataFrame; the kernel has sales"),
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


async def test_a_type_is_matched_by_its_qualified_name_and_a_built_in_type_exactly(kernel: RealKernel) -> None:
    connection = kernel.connection()
    async with connect(connection.url, connection.token) as client:
        completed = await client.complete({"type": "ref/prompt", "name": "explain"}, {"name": "df", "value": ""})
        assert completed.completion.values == ["sales"]  # not `fake`, whose class is only called DataFrame
        completed = await client.complete({"type": "ref/prompt", "name": "count"}, {"name": "n", "value": ""})
        assert completed.completion.values == ["n"]  # not `flag`: a bool is an int subclass
        rendered = await client.get_prompt("count", {"n": "n"})
        assert rendered.messages[0].content.text == "Count to 3."
        with pytest.raises(MCPError) as raised:
            await client.get_prompt("count", {"n": "flag"})
    assert "'flag' is a bool, not a int; the kernel has n" in raised.value.error.message


@pytest.mark.parametrize(
    ("variable", "complaint"),
    [
        ("big", "'big' is a str of 30,000,000 items, over the 1,000,000 characters a value may have"),
        ("huge", "'huge' written out is 3,000,000 characters, over the 1,000,000 a value may have"),
        ("slow", "writing 'slow' (a Slow) out took over 2 s and was stopped, so that the kernel's cells do not wait"),
    ],
)
async def test_a_variable_over_the_size_or_time_budget_is_refused_and_the_kernel_goes_on(
    kernel: RealKernel, variable: str, complaint: str
) -> None:
    connection = kernel.connection()
    async with connect(connection.url, connection.token) as client:
        started = time.monotonic()
        with pytest.raises(MCPError) as raised:
            await client.get_prompt("show", {"v": variable})
        assert time.monotonic() - started < FORMAT_SECONDS + 10  # not the minute `slow` would take
        assert raised.value.error.code == -32602
        assert complaint in raised.value.error.message
        # The main thread is free at once: a cell runs (within the harness's deadline, far under the minute
        # the slow `__str__` would take), and the server still answers.
        assert kernel.execute("print(n + 1)").text == "4\n"
        rendered = await client.get_prompt("show", {"v": "label"})
        assert rendered.messages[0].content.text == "Show q3."
