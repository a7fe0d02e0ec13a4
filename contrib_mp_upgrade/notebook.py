# Copyright 2026 The contrib_mixed_precision Authors.
# SPDX-License-Identifier: Apache-2.0
"""Turns a Jupyter notebook's code cells into one Python source, and back.

The converters work on Python files. A notebook (nbformat 4 JSON) is
converted through a stand-in: its code cells, in order, as one Python
source (`Notebook.source`), each cell after a marker statement that names
it (`pass  # <tag> cell 3`: a statement, so a converter that removes a
cell's first statement cannot take the marker with it). What is IPython
rather than Python (`%matplotlib inline`, a `%%time` line, `!pip install
...` and its `\\` continuation lines, `obj?` help, `files = !ls`, the body
of a `%%bash` cell) is masked: each such line becomes `pass` with a
numbered marker comment, at the line's own indentation, so a converter
never reads it as code and the indented block around it still parses;
`join` puts the original line back byte for byte. The statement of a
`%time`, `%timeit` or `%prun` line is Python run in the notebook, so it
is converted: the stand-in holds the statement alone (its magic and
options set aside, a marker comment after it), and `join` puts the magic
back in front of the converted statement. Each line of a cell stays one
line of the stand-in, so a stand-in line maps to a cell and a line in it
(`describe`). Cells are counted from 1, every cell (markdown and raw
included), as a reader counts them down the page; the report and
`--check` both count so.

An import the converter adds ahead of all code goes into the first code
cell it changed, after that cell's leading IPython lines (a cell magic
must stay a cell's first line; a `!pip install` runs before the import),
and never into a cell whose magic is not Python (`%%bash`).

`join` writes the converted stand-in back into the notebook by splicing:
only the JSON text of each changed code cell's `source` is replaced, in
the form it had (a string or a list of lines), and a list keeps the bytes
of its unchanged lines. Every other byte of the file (line endings,
escapes, number spelling, key order, duplicate keys, indentation, a BOM)
is the file's own.

A notebook is Python unless its kernel says otherwise (`python`, and the
`python3` some tools write, are Python); one of another language (R) whose
code cells use the API is not converted, and says so. A cell whose lines
end in CR alone is converted with LF line ends in the stand-in, and `join`
puts its CRs back.

TensorFlow's `tf_upgrade_v2 --infile x.ipynb` does the same in spirit: it
converts code cells only, skips `%%` cells and comments out `%`, `!` and
`?` lines while it converts.

This module needs only the standard library.
"""

import ast
import bisect
import codecs
import dataclasses
import functools
import json
import re
import tokenize
from typing import Dict, List, Optional, Sequence, Tuple, Union

SUFFIX = ".ipynb"

_TAG = "contrib-mp-upgrade-notebook"

# Cell magics whose body is Python run in the notebook's namespace; the
# body of any other (`%%bash`, `%%writefile`, `%%html`) is not Python.
_PYTHON_CELL_MAGICS = frozenset(("time", "timeit", "capture", "prun",
                                 "debug"))

# Cell magics that write their body to a file, most often a Python one.
_WRITE_MAGICS = frozenset(("%%writefile", "%%file"))

# Line magics that run the rest of their line as Python in the notebook's
# namespace, with IPython's `getopt` letters: those before `:` take a
# value. `%time` takes `--no-raise-error` in recent IPython.
_PYTHON_LINE_MAGICS = {"time": ("", ""), "timeit": ("nrp", "tcqo"),
                       "prun": ("DlsT", "rq")}
_LINE_MAGIC = re.compile(r"([ \t]*)%(time|timeit|prun)(?=[ \t])")
_WORD = re.compile(r"\S+")

# IPython's escapes at the start of a logical line: `!cmd`, `%magic`,
# `?obj`, and the autocall forms `,f a`, `;f a`, `/f a`. None of them
# begins valid Python.
_ESCAPES = ("!", "%", "?", ",", ";", "/")
# `files = !ls`, `out = %time f()`.
_MAGIC_ASSIGN = re.compile(
    r"^[ \t]*[A-Za-z_][\w.]*(?:[ \t]*,[ \t]*[A-Za-z_][\w.]*)*[ \t]*="
    r"[ \t]*[!%]")
_FUTURE = re.compile(r"^from[ \t]+__future__[ \t]+import[ \t]+[^(\\]*$")
# Lines only Python 2 writes (as `rewrite` checks a file): the likely
# reason a cell does not parse.
_PY2_HINT = re.compile(
    r"^[ \t]*(?:print[ \t]+[^\s(=]|exec[ \t]+[\"']|except[ \t]+[\w.]+[ \t]*,)",
    re.MULTILINE)
# A use the converters would rewrite, as IPython text shows it.
_USE = "contrib.mixed_precision"


class NotebookError(Exception):
  """The notebook cannot be converted; the message says why."""


@dataclasses.dataclass
class Span:
  """Where one code cell's `source` value is in the notebook's text.

  Attributes:
    start: The index of its first character (`"` or `[`).
    end: The index after its last one.
    key: The index of its `"source"` key (for the indentation).
    items: For a list: `(start, end)` of each string in it; else None.
  """
  start: int
  end: int
  key: int
  items: Optional[List[Tuple[int, int]]]


@dataclasses.dataclass
class Notebook:
  """A notebook read for conversion.

  Attributes:
    raw: The file's bytes.
    data: Its parsed JSON.
    source: Its code cells as one Python source (UTF-8 bytes).
    tag: The marker text of this notebook's stand-in (absent from it).
    masks: `{number: original line}` of each masked IPython line and of
      each converted line magic, without its "\\n".
    mask_cells: `{number: cell index}` of each of them.
    code_cells: The indices (in `data["cells"]`) of the cells in `source`.
    newline_added: `{cell index: whether a final "\\n" was added}`.
    warnings: `(stand-in line, message)` about code left as it was: an
      IPython line, or the body of a cell magic that is not Python
      (`%%writefile`, `%%bash`), that uses `tf.contrib.mixed_precision`.
    magic_starts: `{number: index}` for each converted line magic: where
      its statement starts in its original line (after `%time `).
    columns: `{stand-in line: characters}` set aside before the
      statement of a converted line magic, to add to a column there.
    left: `(stand-in line, mask number, what)` of each use of
      `tf.contrib.mixed_precision` that stays unconverted and will fail
      where it runs: the first masked line of the IPython line, or of the
      `%%writefile` cell, that holds it. `--check` lists them, and the
      report does not count the notebook as ready.
    first_masks: `{cell index: its first mask number}`.
    whole: The indices of cells that are not Python at all (`%%bash`).
    text: The file's text, without its BOM.
    bom: Whether the file starts with a UTF-8 BOM.
    spans: `{cell index: Span}` of each code cell's `source`.
    cr_cells: The indices of the code cells whose lines end in CR alone:
      their stand-in ends them in LF, and `join` puts the CRs back.
  """
  raw: bytes
  data: dict
  source: bytes
  tag: str
  masks: Dict[int, str]
  mask_cells: Dict[int, int]
  code_cells: List[int]
  newline_added: Dict[int, bool]
  warnings: List[Tuple[int, str]] = dataclasses.field(default_factory=list)
  magic_starts: Dict[int, int] = dataclasses.field(default_factory=dict)
  columns: Dict[int, int] = dataclasses.field(default_factory=dict)
  left: List[Tuple[int, int, str]] = dataclasses.field(default_factory=list)
  first_masks: Dict[int, int] = dataclasses.field(default_factory=dict)
  whole: List[int] = dataclasses.field(default_factory=list)
  text: str = ""
  bom: bool = False
  spans: Dict[int, Span] = dataclasses.field(default_factory=dict)
  cr_cells: List[int] = dataclasses.field(default_factory=list)


def _cell_text(source: Union[str, List[str]]) -> str:
  return source if isinstance(source, str) else "".join(source)


def _lines_of(text: str, newline: str = "\n") -> List[str]:
  """`text` split after each `newline` only.

  By default after LF alone: not at a CR (a CR-only cell passes "\\r") or
  a form feed.
  """
  parts = text.split(newline)
  lines = [p + newline for p in parts[:-1]]
  if parts[-1]:
    lines.append(parts[-1])
  return lines


def _decode(raw: bytes) -> Tuple[str, bool]:
  bom = raw.startswith(codecs.BOM_UTF8)
  body = raw[len(codecs.BOM_UTF8):] if bom else raw
  try:
    return body.decode("utf-8"), bom
  except UnicodeDecodeError as e:
    raise NotebookError(
        "not UTF-8, which a notebook's JSON must be (invalid byte 0x{:02x} at "
        "line {}); convert it to UTF-8 and run again".format(
            body[e.start], body.count(b"\n", 0, e.start) + 1)) from e


def _load(text: str) -> dict:
  """The notebook's JSON, checked to be nbformat 4."""
  try:
    data = json.loads(text)
  except json.JSONDecodeError as e:
    raise NotebookError(
        "not valid JSON ({} at line {}, column {}); a notebook is a JSON "
        "file: open it in Jupyter to repair it, or restore it from version "
        "control".format(e.msg, e.lineno, e.colno)) from e
  except RecursionError:
    raise NotebookError(
        "not a notebook: its JSON nests too deeply to read") from None
  if not isinstance(data, dict):
    raise NotebookError(
        "not a notebook: its JSON is a {}, not a JSON object".format(
            type(data).__name__))
  version = data.get("nbformat")
  if version != 4:
    if version is None:
      raise NotebookError("not a notebook: its JSON has no `nbformat` field")
    raise NotebookError(
        "a notebook in nbformat {!r}; this command reads nbformat 4 only. "
        "Save it from Jupyter, or run `jupyter nbconvert --to notebook "
        "--nbformat 4 --output new.ipynb old.ipynb`, and run "
        "again".format(version))
  cells = data.get("cells")
  if not isinstance(cells, list):
    raise NotebookError(
        "not an nbformat 4 notebook: `cells` is {}, not a list".format(
            "missing" if cells is None else "a " + type(cells).__name__))
  for i, cell in enumerate(cells):
    if not isinstance(cell, dict) or not isinstance(cell.get("cell_type"),
                                                    str):
      raise NotebookError(
          "not an nbformat 4 notebook: cell {} has no `cell_type`".format(
              i + 1))
    source = cell.get("source")
    if cell["cell_type"] == "code" and not (
        isinstance(source, str) or (isinstance(source, list) and all(
            isinstance(s, str) for s in source))):
      raise NotebookError(
          "not an nbformat 4 notebook: the `source` of cell {} is {}, not "
          "text or a list of lines".format(i + 1, type(source).__name__))
  return data


# JSON's own whitespace.
_WS = re.compile(r"[ \t\n\r]*")
_DECODER = json.JSONDecoder()


def _spans(text: str) -> Dict[int, Span]:
  """`{cell index: Span}` of each cell's `source` in well-formed `text`.

  Only the path to the sources is walked; every other value is skipped by
  the `json` module's own scanner. Where a key repeats, the last one
  counts, as in `json.loads`.
  """

  def ws(i):
    return _WS.match(text, i).end()

  def members(i):
    """`(key, key index, value index)` of an object at `i`; its end."""
    found = []
    i = ws(i + 1)
    if text[i] == "}":
      return found, i + 1
    while True:
      key_at = i
      key, i = json.decoder.scanstring(text, i + 1)
      i = ws(ws(i) + 1)  # Past the `:`.
      found.append((key, key_at, i))
      _, i = _DECODER.raw_decode(text, i)
      i = ws(i)
      if text[i] == "}":
        return found, i + 1
      i = ws(i + 1)  # Past the `,`.

  def strings(i):
    """`(start, end)` of each item of an array of strings at `i`; its end."""
    found = []
    i = ws(i + 1)
    if text[i] == "]":
      return found, i + 1
    while True:
      _, end = _DECODER.raw_decode(text, i)
      found.append((i, end))
      i = ws(end)
      if text[i] == "]":
        return found, i + 1
      i = ws(i + 1)

  top, _ = members(ws(0))
  cells_at = [at for key, _, at in top if key == "cells"][-1]
  spans = {}
  i = ws(cells_at + 1)
  index = 0
  while text[i] != "]":
    fields, end = members(i)
    sources = [(key_at, at) for key, key_at, at in fields if key == "source"]
    if sources:
      key_at, at = sources[-1]
      if text[at] == "[":
        items, stop = strings(at)
      else:
        items, stop = None, _DECODER.raw_decode(text, at)[1]
      spans[index] = Span(at, stop, key_at, items)
    index += 1
    i = ws(end)
    if text[i] == ",":
      i = ws(i + 1)
  return spans


# How notebooks spell a Python kernel's language: Jupyter writes "python";
# some tools write the kernel's name ("python3", "ipython3").
_PYTHON_LANGUAGE = re.compile(r"i?python[ \t]*[23]?(?:\.\d+)*")


def _language(data: dict) -> Optional[str]:
  """The kernel's language as the notebook names it, or None."""
  metadata = data.get("metadata")
  if not isinstance(metadata, dict):
    return None
  for key, field in (("kernelspec", "language"), ("language_info", "name")):
    value = metadata.get(key)
    if isinstance(value, dict) and isinstance(value.get(field), str):
      return value[field]
  return None


def _is_python(language: Optional[str]) -> bool:
  """Whether the kernel runs Python (true where the notebook does not say)."""
  return language is None or _PYTHON_LANGUAGE.fullmatch(
      language.strip().lower()) is not None


def _at_statement_start(lines: Sequence[str]) -> bool:
  """Whether code `lines` end between statements (not inside one)."""
  text = "\n".join(lines) + "\n"
  try:
    for _ in tokenize.generate_tokens(iter(text.splitlines(True)).__next__):
      pass
  except tokenize.TokenError:
    return False  # An open bracket, string or `\` continuation.
  except (SyntaxError, ValueError):
    pass  # Bad code before: the cell's own parse reports it.
  return True


def _is_help(line: str) -> bool:
  """`obj?` or `obj??`: IPython's help, not Python."""
  stripped = line.strip()
  if not stripped.endswith("?"):
    return False
  try:
    ast.parse(stripped)
    return False  # `x = 1  # why?`
  except (SyntaxError, ValueError):
    pass
  try:
    ast.parse(stripped.rstrip("?"))
    return True
  except (SyntaxError, ValueError):
    return False


def _magic_statement(line: str) -> Optional[int]:
  """Where the Python statement of a `%time`-like `line` starts, or None.

  None unless the line is `%time`, `%timeit` or `%prun`, its options read
  as IPython reads them (`getopt`: `-n 10`, `-n10`, `-qo`), and the rest
  of the line parses as Python on its own.
  """
  match = _LINE_MAGIC.match(line)
  if match is None or line.rstrip("\r").endswith("\\"):
    return None
  valued, flags = _PYTHON_LINE_MAGICS[match.group(2)]
  words = list(_WORD.finditer(line, match.end()))
  start = None
  k = 0
  while k < len(words):
    word = words[k].group()
    if word == "--no-raise-error" and match.group(2) == "time":
      k += 1
      continue
    if not word.startswith("-") or word == "-":
      start = words[k].start()
      break
    if word == "--":
      start = words[k + 1].start() if k + 1 < len(words) else None
      break
    for j, letter in enumerate(word[1:]):
      if letter in valued:
        if j + 2 == len(word):
          k += 1  # The value is the next word.
        break
      if letter not in flags:
        return None  # Not an option IPython knows: leave the line alone.
    k += 1
  if start is None:
    return None
  statement = line[start:].rstrip("\r")
  try:
    ast.parse(statement)
  except (SyntaxError, ValueError):
    return None
  return start


def _ipython_lines(lines: List[str]) -> List[Union[bool, int]]:
  """For each line of a cell: False (Python), True (IPython), or an int.

  An int marks a `%time`-like line whose statement, from that index on, is
  Python (`_magic_statement`).
  """
  first = lines[0] if lines else ""
  if first.startswith("%%"):
    name = first[2:].split()[0] if first[2:].split() else ""
    if name not in _PYTHON_CELL_MAGICS:
      return [True] * len(lines)  # Not Python at all (%%bash).
  masked: List[Union[bool, int]] = [False] * len(lines)
  kept: List[str] = []  # The cell so far, masked lines left out.
  tail = False
  for i, line in enumerate(lines):
    if tail:
      masked[i] = True
      tail = line.rstrip("\r").endswith("\\")
      continue
    stripped = line.lstrip()
    candidate = (stripped.startswith(_ESCAPES) or
                 _MAGIC_ASSIGN.match(line) is not None or _is_help(line))
    # Only at the start of a statement: `% b` inside brackets is Python.
    if candidate and (not kept or _at_statement_start(kept)):
      start = _magic_statement(line) if i or not first.startswith(
          "%%") else None
      masked[i] = True if start is None else start
      tail = line.rstrip("\r").endswith("\\")
    else:
      kept.append(line)
  return masked


# A CR that ends a line of a cell that also has LF line ends.
_LONE_CR = re.compile(r"\r(?!\n)(?!\Z)")


def _check_cell(text: str, number: int) -> None:
  if "\0" in text:
    line = text.count("\n", 0, text.find("\0")) + 1
    raise NotebookError("a NUL byte at cell {}, line {}; remove it and run "
                        "again".format(number, line))
  lone = _LONE_CR.search(text)
  if lone is not None:
    # A cell all in CR is read (`cr_cells`); libcst reads no mix of both.
    raise NotebookError(
        "a CR alone ends cell {}, line {}, among LF line ends; give the "
        "cell's lines one kind of line end and run again".format(
            number, text.count("\n", 0, lone.start()) + 1))
  try:
    compile(text, "<cell {}>".format(number), "exec",
            ast.PyCF_ONLY_AST | ast.PyCF_ALLOW_TOP_LEVEL_AWAIT,
            dont_inherit=True)
  except SyntaxError as e:
    hint = ("; it looks like Python 2: port it to Python 3"
            if _PY2_HINT.search(text) else "")
    raise NotebookError(
        "it does not parse as Python 3 (syntax error at cell {}, line {}, "
        "column {}{}); IPython lines (%, !, ?) are not the cause, they are "
        "set aside".format(number, e.lineno or 1, e.offset or 1, hint)) from e
  except ValueError as e:  # Whatever else `compile` refuses.
    raise NotebookError("cell {} cannot be read as Python ({})".format(
        number, e)) from e


def _quote(text: str) -> str:
  text = " ".join(text.split())
  return text if len(text) <= 60 else text[:57] + "..."


def read(raw: bytes) -> Notebook:
  """Reads a notebook and builds its Python stand-in.

  Args:
    raw: The notebook file's bytes.

  Returns:
    A `Notebook`.

  Raises:
    NotebookError: It is not UTF-8 JSON in nbformat 4, or a code cell does
      not parse as Python once its IPython lines are set aside.
  """
  text, bom = _decode(raw)
  data = _load(text)
  cells = data["cells"]
  language = _language(data)
  python = _is_python(language)
  if not python and any(
      "mixed_precision" in _cell_text(c["source"]) and
      "contrib" in _cell_text(c["source"])
      for c in cells if c["cell_type"] == "code"):
    # Skipped silently, it read as converted and ready to run.
    raise NotebookError(
        "its kernel's language is {!r}, not Python, and its code cells use "
        "tf.contrib's mixed_precision; this command converts Python "
        "notebooks only: convert those uses by hand".format(language))
  code = [i for i, c in enumerate(cells) if c["cell_type"] == "code"
          and python]
  texts = {i: _cell_text(cells[i]["source"]) for i in code}
  cr_cells = [i for i in code if "\r" in texts[i] and "\n" not in texts[i]]
  for i in cr_cells:
    # Python reads a lone CR as a line end, but libcst does not: the
    # stand-in ends such a cell's lines in LF, and `_restore` puts the
    # CRs back.
    texts[i] = texts[i].replace("\r", "\n")
  every = "\n".join(texts.values())
  tag, n = _TAG, 0
  while tag in every:
    n += 1
    tag = "{}-{}".format(_TAG, n)
  # The coding cookie keeps a cell's own cookie (line 2 otherwise) from
  # changing how the stand-in is read. The string after it is the
  # module's docstring: an import a converter puts "after the docstring"
  # lands ahead of every cell, where `_restore` can place it.
  out = ["# -*- coding: utf-8 -*- {}\n'{}'\n".format(tag, tag)]
  line_no = 3  # The stand-in line the next cell's marker is on.
  notebook = Notebook(raw=raw, data=data, source=b"", tag=tag, masks={},
                      mask_cells={}, code_cells=code, newline_added={},
                      text=text, bom=bom, cr_cells=cr_cells)
  masks = notebook.masks
  for i in code:
    lines = texts[i].split("\n")
    masked = _ipython_lines(lines)
    flat = all(m is True for m in masked)  # No indentation to keep.
    whole = flat and lines[0].startswith("%%")  # Not Python (`%%bash`).
    if whole:
      notebook.whole.append(i)
      if _USE in texts[i] and lines[0].split()[0] in _WRITE_MAGICS:
        # What it writes is Python to run; a `%%bash` cell's text is often
        # only an `echo`, and stays a warning.
        notebook.left.append((line_no + 1, len(masks) + 1,
                              "a `{}` cell".format(lines[0].split()[0])))
      if _USE in texts[i]:
        notebook.warnings.append((line_no + 1, (
            "a `{}` cell: its body is not Python run by this notebook, so "
            "its `tf.contrib.mixed_precision` uses were not converted. "
            "Convert what it writes or runs separately.").format(
                lines[0].split()[0])))
    indent, continued = "", False
    body = []
    logical = None  # The line of the IPython line a `\` tail continues.
    for j, (line, kind) in enumerate(zip(lines, masked)):
      if kind is False and _FUTURE.match(line):
        # Valid first in its cell, but not after the stand-in's docstring
        # and other cells' code.
        kind = True
      if kind is False:
        continued = False
        body.append(line)
        continue
      number = len(masks) + 1
      masks[number], notebook.mask_cells[number] = line, i
      notebook.first_masks.setdefault(i, number)
      cr = "\r" if line.endswith("\r") else ""
      if kind is not True:
        lead = len(line) - len(line.lstrip(" \t"))
        notebook.magic_starts[number] = kind
        notebook.columns[line_no + 1 + j] = kind - lead
        body.append("{}{}  # {} magic {}{}".format(
            line[:lead], line[kind:len(line) - len(cr)], tag, number, cr))
        continued = False
        continue
      if not continued:
        # A `\` continuation line takes the indentation of its first.
        indent = "" if flat else line[:len(line) - len(line.lstrip(" \t"))]
        logical = (j, number)
      continued = line.rstrip("\r").endswith("\\")
      if not whole and _USE in line:
        first, first_number = logical
        if not notebook.left or notebook.left[-1][1] != first_number:
          what = _quote(lines[first])
          notebook.left.append((line_no + 1 + first, first_number,
                                "`{}`".format(what)))
          notebook.warnings.append((line_no + 1 + first, (
              "an IPython line (`{}`) uses `tf.contrib.mixed_precision`; "
              "this command converts a use there only in the statement of "
              "a one-line `%time`, `%timeit` or `%prun`. Convert it by "
              "hand.").format(what)))
      body.append("{}pass  # {} magic {}{}".format(indent, tag, number, cr))
    cell = "\n".join(body)
    _check_cell(cell, i + 1)
    added = bool(cell) and not cell.endswith("\n")
    notebook.newline_added[i] = added
    marker = "pass  # {} cell {}\n".format(tag, i + 1)
    out.append(marker + cell + ("\n" if added else ""))
    line_no += 1 + cell.count("\n") + added
  notebook.source = "".join(out).encode("utf-8")
  try:
    notebook.spans = _spans(text)
  except (ValueError, IndexError, RecursionError) as e:
    raise NotebookError("its JSON could not be located cell by cell "
                        "({})".format(e)) from e
  for i in code:
    span, source = notebook.spans.get(i), cells[i]["source"]
    if span is None or (span.items is None) != isinstance(source, str) or (
        span.items is not None and len(span.items) != len(source)):
      raise NotebookError("the `source` of cell {} could not be located in "
                          "its JSON".format(i + 1))
  return notebook


@functools.lru_cache(maxsize=64)
def _markers(data: bytes, tag: str) -> Tuple[Tuple[int, ...], Tuple[int,
                                                                     ...]]:
  """`(stand-in lines, cell indices)` of the cell markers in `data`."""
  pattern = re.compile(rb"^[ \t]*pass  # " + re.escape(tag.encode()) +
                       rb" cell (\d+)\r?$", re.MULTILINE)
  lines, cells, line, position = [], [], 1, 0
  for match in pattern.finditer(data):
    line += data.count(b"\n", position, match.start())
    position = match.start()
    lines.append(line)
    cells.append(int(match.group(1)) - 1)
  return tuple(lines), tuple(cells)


def locate(notebook: Notebook, data: bytes,
           line: int) -> Optional[Tuple[int, int]]:
  """`(cell number, line in it)`, both from 1, of stand-in `line` in `data`.

  Cells are numbered as the report numbers them: every cell, markdown and
  raw included.

  Args:
    notebook: The notebook.
    data: A stand-in of it: `notebook.source`, or a converted one.
    line: A line of `data`.

  Returns:
    Where it is, or None for the stand-in's own lines ahead of the first
    cell (findings about the whole file).
  """
  lines, cells = _markers(data, notebook.tag)
  k = bisect.bisect_left(lines, line)
  if k == 0:
    return None
  return cells[k - 1] + 1, line - lines[k - 1]


def column(notebook: Notebook, line: int, col: int) -> int:
  """Column `col` of `notebook.source`'s `line`, in the cell's own line.

  A converted line magic's statement stands without its `%time ` in the
  stand-in.
  """
  return col + notebook.columns.get(line, 0)


def describe(notebook: Notebook, data: bytes, line: int) -> str:
  """`cell 3, line 2` for stand-in `line` of `data` (see `locate`)."""
  where = locate(notebook, data, line)
  if where is None:
    return "the whole notebook"
  return "cell {}, line {}".format(*where)


def describe_lines(notebook: Notebook, data: bytes, lines: Sequence[int],
                   limit: int = 3) -> str:
  """`cell 3, lines 2, 5; cell 7, line 1`: up to `limit` lines, by cell."""
  ordered = sorted(set(lines))
  cells: Dict[Optional[int], List[int]] = {}
  for line in ordered[:limit]:
    where = locate(notebook, data, line)
    if where is None:
      cells.setdefault(None, [])
    else:
      cells.setdefault(where[0], []).append(where[1])
  parts = []
  for cell, in_cell in cells.items():
    if cell is None:
      parts.append("the whole notebook")
    else:
      parts.append("cell {}, {} {}".format(
          cell, "line" if len(in_cell) == 1 else "lines",
          ", ".join(str(l) for l in in_cell)))
  text = "; ".join(parts)
  return text + (", ..." if len(ordered) > limit else "")


def relabel(notebook: Notebook, data: bytes, message: str) -> str:
  """`message` with each `line N` (of stand-in `data`) named by cell."""
  return re.sub(r"\b(?:output )?line (\d+)",
                lambda m: describe(notebook, data, int(m.group(1))), message)


def left_lines(notebook: Notebook, data: bytes) -> List[int]:
  """The lines of stand-in `data` that hold an unconverted use.

  Each is the first masked line of the IPython line or non-Python cell
  (`Notebook.left`) that uses `tf.contrib.mixed_precision`.
  """
  numbers = {number for _, number, _ in notebook.left}
  pattern = re.compile(rb"  # " + re.escape(notebook.tag.encode()) +
                       rb" magic (\d+)\r?$", re.MULTILINE)
  found, line, position = [], 1, 0
  for match in pattern.finditer(data):
    if int(match.group(1)) in numbers:
      line += data.count(b"\n", position, match.start())
      position = match.start()
      found.append(line)
  return found


def _restore(notebook: Notebook, output: bytes) -> Dict[int, str]:
  """`{cell index: its new text}` from a converted stand-in."""
  try:
    text = output.decode("utf-8")
  except UnicodeDecodeError:
    raise NotebookError("the converted code is not UTF-8") from None
  tag = re.escape(notebook.tag)
  marker = re.compile(r"^[ \t]*pass  # " + tag + r" cell (\d+)\r?\n?$")
  mask = re.compile(r"  # " + tag + r" magic (\d+)(\r?\n?)$")
  plain = re.compile(r"^[ \t]*pass$")
  # Per cell, its lines, each with its mask number (None for Python).
  segments: Dict[int, List[Tuple[str, Optional[int]]]] = {}
  order: List[int] = []
  current: Optional[List[Tuple[str, Optional[int]]]] = None
  before: List[Tuple[str, Optional[int]]] = []
  seen = set()
  header = ["# -*- coding: utf-8 -*- {}".format(notebook.tag),
            "'{}'".format(notebook.tag)]
  lines = _lines_of(text)
  if [l.rstrip("\r\n") for l in lines[:2]] != header:
    raise NotebookError("the conversion changed the stand-in's first lines")
  for line in lines[2:]:
    match = marker.match(line)
    if match is not None:
      cell = int(match.group(1)) - 1
      order.append(cell)
      current = segments.setdefault(cell, [])
      continue
    number = None
    match = mask.search(line)
    if match is not None:
      number = int(match.group(1))
      cell = order[-1] if order else None
      original = notebook.masks.get(number)
      code = line[:match.start()]
      start = notebook.magic_starts.get(number)
      if (number in seen or notebook.mask_cells.get(number) != cell or
          (start is None and plain.match(code) is None)):
        raise NotebookError(
            "an IPython line was moved or repeated by the conversion")
      seen.add(number)
      ending = match.group(2)
      if start is not None:
        # The converted statement, after its own `%time ` and options.
        lead = len(original) - len(original.lstrip(" \t"))
        cr = "\r" if original.endswith("\r") else ""
        statement = (code[lead:] if code[:lead] == original[:lead]
                     else code.lstrip(" \t"))
        line = original[:start] + statement + cr + ending.lstrip("\r")
      else:
        line = original + ending.lstrip("\r")
    (current if current is not None else before).append((line, number))
  # A `%time` statement the conversion removed (`%time mp =
  # tf.contrib.mixed_precision`, an alias) goes with its magic, as the
  # same line of a .py file goes.
  lost = set(notebook.masks) - seen
  if order != notebook.code_cells or any(
      number not in notebook.magic_starts for number in lost):
    raise NotebookError(
        "the conversion lost or reordered cell boundaries or IPython lines")
  _place_additions(notebook, segments, before)
  out = {}
  for cell in notebook.code_cells:
    new = "".join(line for line, _ in segments[cell])
    if notebook.newline_added[cell] and new.endswith("\n"):
      new = new[:-1]
    if cell in notebook.cr_cells:
      new = new.replace("\n", "\r")
    out[cell] = new
  return out


def _stand_in_text(notebook: Notebook, cell: int) -> str:
  """Cell `cell`'s text as the stand-in holds it (LF for a lone CR)."""
  text = _cell_text(notebook.data["cells"][cell]["source"])
  return text.replace("\r", "\n") if cell in notebook.cr_cells else text


def _place_additions(notebook: Notebook, segments, before) -> None:
  """Moves added lines out of the places IPython cannot have them.

  A cell magic (`%%time`) must be its cell's first line, and a cell whose
  magic is not Python (`%%bash`) takes no Python at all. Lines added
  ahead of every cell go into the first cell the conversion changed.
  """

  def text(cell):
    return "".join(line for line, _ in segments[cell])

  def head(cell):
    """Where lines added at `cell`'s top go: after its leading magics."""
    k = 0
    lines = segments[cell]
    while k < len(lines) and lines[k][1] is not None and (
        notebook.magic_starts.get(lines[k][1]) is None):
      k += 1
    return k

  def insert(cell, lines):
    # Every line of a stand-in's cell ends with "\n" (`newline_added`).
    k = head(cell)
    segments[cell][k:k] = lines

  python = [c for c in notebook.code_cells if c not in notebook.whole]
  # Lines added inside a non-Python cell leave it for the next Python one.
  for cell in notebook.whole:
    added = [(l, n) for l, n in segments[cell] if n is None]
    if not added:
      continue
    segments[cell] = [(l, n) for l, n in segments[cell] if n is not None]
    later = [c for c in python if c > cell]
    if later:
      insert(later[0], added)
    elif python:
      segments[python[-1]].extend(added)
  # Lines added above a Python cell magic go just after it.
  for cell in python:
    lines = segments[cell]
    first = notebook.first_masks.get(cell)
    if first is None or not _cell_text(
        notebook.data["cells"][cell]["source"]).startswith("%%"):
      continue
    k = next(k for k, (_, n) in enumerate(lines) if n == first)
    if k:
      segments[cell] = lines[k:k + 1] + lines[:k] + lines[k + 1:]
  if before and python:
    changed = [c for c in python if text(c) != _stand_in_text(notebook, c) +
               ("\n" if notebook.newline_added[c] else "")]
    insert((changed or python)[0], before)


# A lone surrogate (`"\ud800"` in the file) has no UTF-8 form.
_SURROGATE = re.compile("[\ud800-\udfff]")


def _string(value: str, ascii_only: bool) -> str:
  """`value` as a JSON string, escaped as the file escapes."""
  token = json.dumps(value, ensure_ascii=ascii_only)
  if not ascii_only:
    token = _SURROGATE.sub(lambda m: "\\u{:04x}".format(ord(m.group())),
                           token)
  return token


def _layout(notebook: Notebook, span: Span) -> Tuple[str, str, str]:
  """`(after "[", between items, before "]")` for a list at `span`."""
  text = notebook.text
  items = span.items
  if len(items) >= 2:
    sep = text[items[0][1]:items[1][0]]
    return (text[span.start + 1:items[0][0]], sep,
            text[items[-1][1]:span.end - 1])
  if items:
    opening = text[span.start + 1:items[0][0]]
    return opening, "," + (opening or " "), text[items[-1][1]:span.end - 1]
  # An empty list: lay it out as the file lays out its keys.
  line_start = text.rfind("\n", 0, span.key) + 1
  indent = text[line_start:span.key]
  if line_start == 0 or indent.strip(" \t"):
    return "", ", ", ""
  newline = "\r\n" if text[line_start - 2:line_start] == "\r\n" else "\n"
  first = re.match(r"\{\r?\n([ \t]*)", text)
  unit = first.group(1) if first is not None and first.group(1) else " "
  return newline + indent + unit, "," + newline + indent + unit, (
      newline + indent)


def _encode_list(notebook: Notebook, span: Span, old: List[str], new: str,
                 ascii_only: bool, newline: str = "\n") -> str:
  """The JSON text of list source `new`, keeping unchanged items' bytes.

  Each new item is a line, ended by `newline` (CR in a `cr_cells` cell).
  """
  text = notebook.text
  if not new:
    return "[]"
  tokens = {}
  for value, (start, end) in zip(old, span.items):
    tokens.setdefault(value, text[start:end])

  def token(value):
    found = tokens.get(value)
    return found if found is not None else _string(value, ascii_only)

  n = len(old)
  # Items kept at both ends (each a whole line of the new text).
  p, a = 0, 0
  while p < n and old[p] and new.startswith(old[p], a) and (
      old[p].endswith(newline) or a + len(old[p]) == len(new)):
    a += len(old[p])
    p += 1
  q, b = 0, len(new)
  while q < n - p and old[n - 1 - q] and b - len(old[n - 1 - q]) >= a and (
      new[b - len(old[n - 1 - q]):b] == old[n - 1 - q]) and (
          b - len(old[n - 1 - q]) == 0 or
          new[b - len(old[n - 1 - q]) - 1] == newline):
    b -= len(old[n - 1 - q])
    q += 1
  middle = [token(v) for v in _lines_of(new[a:b], newline)]
  opening, sep, closing = _layout(notebook, span)
  if n == 0:
    return "[" + opening + sep.join(middle) + closing + "]"
  items = span.items
  if p and q:
    start, end = items[p - 1][1], items[n - q][0]
    body = "".join(sep + t for t in middle) + sep
  elif q:
    start, end = items[0][0], items[n - q][0]
    body = "".join(t + sep for t in middle)
  elif p:
    start, end = items[p - 1][1], items[n - 1][1]
    body = "".join(sep + t for t in middle)
  else:
    start, end = items[0][0], items[n - 1][1]
    body = sep.join(middle)
  return text[span.start:start] + body + text[end:span.end]


def join(notebook: Notebook, output: bytes) -> bytes:
  """The notebook with its code cells taken from the converted `output`.

  Only the JSON text of changed cells' `source` values is replaced (see
  the module docstring); every other byte is the file's own.

  Args:
    notebook: The notebook as read.
    output: Its stand-in after conversion.

  Returns:
    The new notebook file's bytes; `notebook.raw` when no cell changed.

  Raises:
    NotebookError: `output` lost a cell marker or an IPython line, so the
      cells cannot be told apart.
  """
  texts = _restore(notebook, output)
  text = notebook.text
  ascii_only = text.isascii()
  pieces, position = [], 0
  for index in sorted(texts):
    old = notebook.data["cells"][index]["source"]
    new = texts[index]
    if new == _cell_text(old):
      continue
    span = notebook.spans[index]
    if span.items is None:
      replacement = _string(new, ascii_only)
    else:
      replacement = _encode_list(
          notebook, span, old, new, ascii_only,
          "\r" if index in notebook.cr_cells else "\n")
    pieces.append(text[position:span.start])
    pieces.append(replacement)
    position = span.end
  if not pieces:
    return notebook.raw
  pieces.append(text[position:])
  return (codecs.BOM_UTF8 if notebook.bom else b"") + "".join(
      pieces).encode("utf-8")


def check(notebook: Notebook, output: bytes) -> Optional[str]:
  """Why `output` cannot be joined back into `notebook`, or None."""
  try:
    _restore(notebook, output)
  except NotebookError as e:
    return str(e)
  return None
