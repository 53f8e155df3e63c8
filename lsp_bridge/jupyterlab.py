"""What JupyterLab's completer (jupyterlab-lsp 5) needs from the bridge's completion answers.

jupyterlab-lsp reads neither `textEdit`, snippets, nor an item's `command`,
and it cannot apply an edit the server sends (no `workspace/applyEdit`). It
takes the editor's own token at the cursor (in Markdown: the paragraph, a
leaf of CodeMirror's syntax tree) and, for every item of an answer:

* if some item's `insertText` starts with the token's text before the cursor,
  each item's `insertText` replaces the token;
* otherwise each one is written at the token's end.

Its completer then filters the items' `filterText` by what is typed after the
request, and by their common prefix. So the bridge answers in one of two
shapes (both only when the cursor ends its paragraph, where the token ends):

* *after the cursor* (completion.py, every answer): `insertText` is what
  follows the cursor, never starting with the token;
* *whole line*, where the slash line is a paragraph of its own and plain
  text (so the token is exactly the line): every `insertText` is the whole
  new line. This is how "render here" replaces the slash line with the
  rendered prompt; "render below" keeps the line (and starts with it, which
  makes the answer a replacement of the token).

The token holds the space a user types after the command to open the menu (a
trigger character, as Tab indents in a Markdown cell). "Render below" keeps
the line without it; when no item of the answer then starts with the whole
token, one more item does ("as typed": the line as it is), so that the answer
still replaces the token. Its filter text never matches what is typed, so
JupyterLab's completer, which filters an answer by the text it replaces
(`preFilterMatches`, on by default), does not show it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from lsprotocol import types

__all__ = ["as_whole_line", "ends_paragraph", "is_plain_paragraph", "render_items"]

# What may start Markdown inline markup (emphasis, code, links, HTML, entities, escapes, math, strikethrough,
# tables): a line with any of these may be split into several tokens by CodeMirror, so it is not a plain one.
_MARKUP = re.compile(r"[*`\[\]<>&\\~!$|]|(?:^|\W)_|_(?:\W|$)|https?:|www\.")


def _blank(lines: Sequence[str], number: int) -> bool:
    return not (0 <= number < len(lines)) or not lines[number].strip()


def ends_paragraph(lines: Sequence[str], number: int, line: str, column: int) -> bool:
    """Whether the cursor at `column` of line `number` ends its paragraph: nothing after it, no more lines.

    Not even spaces: CodeMirror's paragraph token holds the spaces at the end of a line.
    """
    return column >= len(line) and _blank(lines, number + 1)


def is_plain_paragraph(lines: Sequence[str], number: int, line: str, column: int, trigger: str) -> bool:
    """Whether line `number` is a paragraph of its own, a slash line of plain text, with the cursor at its end.

    Then CodeMirror's token at the cursor is exactly the line (from its first
    character to the cursor, spaces at its end included), and an answer of
    whole lines replaces it.
    """
    return (
        column == len(line)
        and line.startswith(trigger)
        and _blank(lines, number - 1)
        and _blank(lines, number + 1)
        and _MARKUP.search(line) is None
    )


def as_whole_line(item: types.CompletionItem, line: str) -> types.CompletionItem:
    """An item shaped to follow the cursor, as the whole new line `line` (the text before the cursor) + its text."""
    rest = item.insert_text or ""
    item.insert_text = line + rest
    item.filter_text = line + rest
    return item


_NEVER_TYPED = "\x00"  # a filter text no typed line matches


def render_items(
    line: str, command: str, rendered: str, *, markdown: bool, others: Sequence[types.CompletionItem] = ()
) -> list[types.CompletionItem]:
    """Render here (the slash line becomes `rendered`) and render below (kept, the conversation after it).

    `command` (`/server:prompt`) names them. They come after the other items
    of the answer (`others`); their labels do not spell the line, so JupyterLab
    ranks them by `sortText`. The line below is kept without the spaces at its
    end (the one typed to open the menu); see the module's docstring for the
    item that then keeps the answer a replacement of the line.
    """
    kept = line.rstrip()
    preview = types.MarkupContent(types.MarkupKind.Markdown if markdown else types.MarkupKind.PlainText, rendered)
    here = types.CompletionItem(
        label=f"{command} — render here",
        kind=types.CompletionItemKind.Snippet,
        detail="replace this line with the rendered prompt",
        documentation=preview,
        sort_text="99998",  # after every ranked item (ranks are 00000 to 05000)
        filter_text=line,
        insert_text=rendered,
        insert_text_format=types.InsertTextFormat.PlainText,
    )
    below = types.CompletionItem(
        label=f"{command} — render below",
        kind=types.CompletionItemKind.Snippet,
        detail="keep this line, the rendered prompt after it",
        documentation=preview,
        sort_text="99999",
        filter_text=line,
        insert_text=f"{kept}\n\n{rendered}",
        insert_text_format=types.InsertTextFormat.PlainText,
    )
    if kept == line or any((item.insert_text or "").startswith(line) for item in others):
        return [here, below]
    as_typed = types.CompletionItem(
        label=f"{command} — as typed",
        kind=types.CompletionItemKind.Text,
        detail="leave this line as it is",
        sort_text="99999~",
        filter_text=_NEVER_TYPED,
        insert_text=line,
        insert_text_format=types.InsertTextFormat.PlainText,
    )
    return [here, below, as_typed]
