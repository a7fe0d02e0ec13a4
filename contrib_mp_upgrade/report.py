# Copyright 2026 The contrib_mixed_precision Authors.
# SPDX-License-Identifier: Apache-2.0
"""The report: one summary per file, the files that need a person, a total.

On a large legacy tree most findings are other `tf.contrib` modules, which
this command does not convert. They are summarised once per file, with
counts and first lines, so that the few lines about
`tf.contrib.mixed_precision` stay visible. Line numbers are those of the
input file; the few numbers of the output file are labelled "output line".
In a notebook a line is named by its cell (`cell 3, line 2`, cells counted
from 1, markdown included), and notebooks are counted apart from Python
files.
"""

import re
from typing import Dict, List, Optional, Sequence, Tuple

from contrib_mp_upgrade import blockers
from contrib_mp_upgrade import keras2
from contrib_mp_upgrade import notebook as notebook_lib
from contrib_mp_upgrade import pins
from contrib_mp_upgrade import rewrite
from contrib_mp_upgrade import slim
from contrib_mp_upgrade import tf_upgrade_v2_pass
from contrib_mp_upgrade import walk

PROG = "contrib-mp-upgrade"

# The install advice itself is given once, in "Keras 2" (`_keras2`).
LEGACY_KERAS_HINT = (
    "on TensorFlow 2.16 and later `tf.compat.v1.layers` needs Keras 2 "
    "(tf-keras): \"Keras 2\" above says how")


def _layers_note(result, tf_ran: bool,
                 entry: Optional[walk.Entry] = None) -> str:
  note = "tf.layers x{} ({}): {}".format(
      len(result.legacy_layers), _lines(result.legacy_layers, entry=entry),
      LEGACY_KERAS_HINT)
  if result.bare_layers and not tf_ran:
    note += ("; `tf.layers` itself ({}) is gone in TensorFlow 2: "
             "--tf_upgrade_v2 renames it `tf.compat.v1.layers`").format(
                 _lines(result.bare_layers, entry=entry))
  return note


def _lines(lines: Sequence[int], limit: int = 3,
           entry: Optional[walk.Entry] = None, output: bool = False) -> str:
  """`lines 3, 7`, or `cell 2, lines 3, 7` in a notebook.

  The lines are of `entry.source`, or of `entry.output` if `output`.
  """
  if entry is not None and entry.notebook is not None:
    return notebook_lib.describe_lines(
        entry.notebook, entry.output if output else entry.source, lines,
        limit)
  lines = sorted(set(lines))
  text = ", ".join(str(l) for l in lines[:limit])
  if len(lines) > limit:
    text += ", ..."
  return ("line " if len(lines) == 1 else "lines ") + text


def _output_at(entry: walk.Entry, line: int) -> str:
  """`output line 7`, or `output cell 2, line 7` in a notebook."""
  if entry.notebook is None:
    return "output line {}".format(line)
  return "output " + entry.at(line, output=True)


def _contrib_summary(other: Dict[str, List[int]],
                     entry: Optional[walk.Entry] = None) -> str:
  return "; ".join("{} x{} ({})".format(module, len(lines),
                                        _lines(lines, entry=entry))
                   for module, lines in sorted(other.items()))


def _plural(n: int, word: str) -> str:
  return "{} {}{}".format(n, word, "" if n == 1 else "s")


def _of(n: int, entries: Sequence[walk.Entry]) -> str:
  """`2 of 3 Python files`, `1 of 1 notebook`, or both kinds, counted."""
  notebooks = sum(1 for e in entries if e.kind == "notebook")
  python = len(entries) - notebooks
  if not notebooks:
    return "{} of {}".format(n, _plural(python, "Python file"))
  if not python:
    return "{} of {}".format(n, _plural(notebooks, "notebook"))
  return "{} of {} files ({}, {})".format(
      n, len(entries), _plural(python, "Python file"),
      _plural(notebooks, "notebook"))


def _kinds(entries: Sequence[walk.Entry]) -> str:
  """`Python files`, `Notebooks`, or `Python files and notebooks`."""
  notebooks = sum(1 for e in entries if e.kind == "notebook")
  if not notebooks:
    return "Python files"
  return "Notebooks" if notebooks == len(entries) else (
      "Python files and notebooks")


def render(plan: walk.Plan, source: str, destination: str,
           tf_summary: Optional[tf_upgrade_v2_pass.Summary],
           pin: Optional[pins.Pin] = None,
           here: Optional[Tuple[str, str]] = None) -> str:
  """The report text.

  Args:
    plan: The finished plan.
    source: What was read, for the header.
    destination: Where the output went, for the header.
    tf_summary: The `tf_upgrade_v2` pass's summary, or None if it did not
      run.
    pin: What the tree pins of TensorFlow (`pins.find`): said where a
      converted Keras optimizer's `iterations` rule depends on it.
    here: `(distribution, version)` of the TensorFlow beside this command
      (`keras2.installed_tensorflow`), for the Keras 2 install line.

  Returns:
    The report, ending with a newline.
  """
  python = plan.python()
  changed = [e for e in python if e.result.changed]
  failed = [e for e in python if e.result.error]
  attention = [e for e in python
               if not e.result.changed and not e.result.error and
               (e.result.warnings or e.result.tf2x_lost or
                e.result.tf2x_stops or e.result.tf2x_notes)]
  tf_changed = set(tf_summary.changed) if tf_summary else set()
  tf_issues: Dict[str, List[Tuple[int, str, str]]] = {}
  if tf_summary:
    for name, line, kind, message in tf_summary.issues:
      tf_issues.setdefault(name, []).append((line, kind, message))

  out = ["{} report".format(PROG), "=" * 79,
         "Input: {}".format(source), "Output: {}".format(destination),
         "Line numbers are input-file lines unless labelled \"output "
         "line\"." + (" In notebooks, cells are counted from 1, markdown "
                      "cells included." if any(e.notebook for e in python)
                      else "")]
  if pin is not None and any("`iterations`" in text for e in python
                             for _, text in e.result.tf2x_notes):
    out.append(pin.describe())
  out.append("")
  out.extend(_before_you_run(python, tf_summary))
  out.extend(_keras2(python, tf_summary, here))

  if changed:
    out.append("Converted (tf.contrib.mixed_precision -> {}{}{}): {}".format(
        rewrite.PACKAGE, "; tf.contrib.layers, framework and slim -> "
        "tf_slim" if any(e.result.slim_lines for e in python) else "",
        "; TF 2.0-2.8 experimental mixed precision -> TF 2.15+" if any(
            c.tf2x for e in changed for c in e.result.changes) else "",
        _plural(len(changed), "file")))
    out.append("-" * 79)
    for entry in changed:
      out.extend(_file_block(entry, tf_issues.get(entry.name),
                             entry.name in tf_changed, tf_summary))
    out.append("")

  if failed or attention:
    out.append("Not converted, and needs a person")
    out.append("-" * 79)
    for entry in sorted(failed + attention, key=lambda e: e.name):
      if entry.result.error:
        loud = (" It mentions `tf.contrib.mixed_precision`, which was NOT "
                "converted: fix the file and run this command again, or "
                "call `contrib_mixed_precision.install_alias()` before it "
                "runs." if entry.result.mentions_api else "")
        out.append("{}: NOT CONVERTED: {}; copied unchanged.{}".format(
            entry.name, entry.result.error, loud))
      for line, message in entry.result.warnings:
        out.append("{}: WARNING: {}".format(entry.where(line), message))
      for line, what, fix in entry.result.tf2x_lost:
        out.append("{}: NOT KEPT: {}. Fix: {}.".format(entry.where(line),
                                                      what, fix))
      for line, what, fix in entry.result.tf2x_stops:
        out.append("{}: NOT CONVERTED: {}. Fix: {}.".format(
            entry.where(line), what, fix))
      for line, message in entry.result.tf2x_notes:
        out.append("{}: {}".format(entry.where(line), message))
    out.append("")

  others = [e for e in python
            if e.result.other_contrib and not e.result.changed]
  if others:
    out.append("Other tf.contrib modules in unchanged files (neither this "
               "command nor tf_upgrade_v2 converts them): {}".format(
                   _plural(len(others), "file")))
    out.append("-" * 79)
    for entry in others:
      out.append("{}: {}".format(
          entry.name, _contrib_summary(entry.result.other_contrib, entry)))
      out.extend(_slim_left(entry.result, entry))
    out.append("")

  layers = [e for e in python
            if e.result.legacy_layers and not e.result.changed]
  if layers:
    out.append("tf.layers in files this command did not convert: " +
               _plural(len(layers), "file"))
    out.append("-" * 79)
    for entry in layers:
      out.append("{}: {}".format(entry.name, _layers_note(
          entry.result, bool(tf_summary), entry)))
    out.append("")

  if tf_summary is not None:
    out.extend(_tf_section(tf_summary, tf_issues,
                           {e.name for e in changed},
                           {e.name: e for e in python}))

  if plan.skipped:
    out.append("Skipped (not in the output)")
    out.append("-" * 79)
    for name, why in plan.skipped:
      out.append("{}: {}".format(name, why))
    out.append("")

  out.extend(_total(plan, changed, failed, tf_summary))
  return "\n".join(out) + "\n"


def _file_block(entry: walk.Entry, tf_issues, tf_changed: bool,
                tf_summary) -> List[str]:
  result = entry.result
  out = [entry.name]
  for change in result.changes:
    out.append("  {}: `{}` -> `{}`".format(entry.at(change.line),
                                           change.old, change.new))
  for added in result.added:
    out.append("  {}: added `{}`".format(_output_at(entry, added.new_line),
                                        added.text))
  for line, message in result.warnings:
    out.append("  {}: WARNING: {}".format(entry.at(line), message))
  # TF 2.0-2.8 names: what each became, and what could not be kept.
  for line, message in result.tf2x_notes:
    out.append("  {}: {}".format(entry.at(line), message))
  for line, what, fix in result.tf2x_lost:
    out.append("  {}: NOT KEPT: {}. Fix: {}.".format(entry.at(line), what,
                                                     fix))
  for line, what, fix in result.tf2x_stops:
    out.append("  {}: NOT CONVERTED: {}. Fix: {}.".format(entry.at(line),
                                                          what, fix))
  out.extend(_slim_left(result, entry))
  if result.other_contrib:
    out.append("  still uses other tf.contrib modules (not converted): " +
               _contrib_summary(result.other_contrib, entry))
  if result.legacy_layers:
    out.append("  uses " + _layers_note(result, bool(tf_summary), entry))
  if entry.blockers:
    out.append("  still stops it on TensorFlow 2 (output lines):")
    for blocker in entry.blockers:
      out.append("    - {} ({}): {}".format(
          blocker.what, _lines(blocker.lines, entry=entry, output=True),
          blocker.fix))
  if tf_changed:
    out.append("  tf_upgrade_v2 also changed this file")
  if tf_summary is not None:
    out.extend("  " + line
               for line in _renamed_after(tf_summary, entry.name, entry))
  for line, kind, message in tf_issues or ():
    out.append("  {}: tf_upgrade_v2 {}: {}".format(
        _output_at(entry, line), kind, message))
  return out


def _slim_left(result, entry: Optional[walk.Entry] = None) -> List[str]:
  """The uses `--contrib-to-slim` left, each with why."""
  return ["  {}: not rewritten to tf_slim: {}".format(
      entry.at(line) if entry is not None else line, why)
          for line, why in result.slim_left]


def _slim_note(python: List[walk.Entry]) -> List[str]:
  slimmed = [e for e in python if e.result.slim_lines]
  if not slimmed:
    return []
  return ["Rewritten to tf_slim (--contrib-to-slim): {} in {} (first: {}). "
          "tf_slim must be installed where they run: {}.".format(
              _plural(sum(len(e.result.slim_lines) for e in slimmed),
                      "line"), _plural(len(slimmed), "file"),
              ", ".join(e.name for e in slimmed[:3]), slim.INSTALL)]


# What `--tf_upgrade_v2` renames after tf_upgrade_v2 itself, because only
# the TensorFlow 2.15 and older one does (see tf_upgrade_v2_pass).
_RENAMED_AFTER = (
    ("layers_renamed", "`tf.layers` renamed `tf.compat.v1.layers`"),
    ("summary_renamed", "TF1 `tf.summary.X` renamed "
     "`tf.compat.v1.summary.X`"),
    ("tpu_renamed", "`tf.contrib.tpu.X` (an Estimator class) renamed "
     "`tf.compat.v1.estimator.tpu.X`"),
)


def _renamed_after(tf_summary, name: str,
                   entry: Optional[walk.Entry] = None) -> List[str]:
  out = []
  for field, what in _RENAMED_AFTER:
    lines = getattr(tf_summary, field).get(name)
    if lines:
      out.append("output {}: {} by this command after tf_upgrade_v2 (as "
                 "TensorFlow 2.15's tf_upgrade_v2 does; later ones do "
                 "not)".format(_lines(lines, entry=entry, output=True),
                               what))
  return out


UNREAD = "could not be read: NOTHING in it was converted"
UNREAD_FIX = ("fix what \"Not converted, and needs a person\" below says about "
              "it, then run this command again")


def _before_you_run(python: List[walk.Entry], tf_summary) -> List[str]:
  """The summary at the top: how many files run as they are, and why not.

  Every file that a converter did not convert is counted here as not
  ready: one this command could not read, and (with `--tf_upgrade_v2`)
  one that tf_upgrade_v2 could not convert, whose blocker
  `cli._find_blockers` added.
  """
  tf_ran = tf_summary is not None
  readable = [e for e in python if not e.result.error]
  ranked: Dict[str, List[walk.Entry]] = {}
  fixes: Dict[str, str] = {}
  uses: Dict[str, int] = {}
  for entry in readable:
    for blocker in entry.blockers:
      ranked.setdefault(blocker.what, []).append(entry)
      uses[blocker.what] = uses.get(blocker.what, 0) + len(blocker.lines)
      fixes.setdefault(blocker.what, blocker.fix)
  unread = [e for e in python if e.result.error]
  if unread:
    ranked[UNREAD] = unread
    uses[UNREAD] = len(unread)
    fixes[UNREAD] = UNREAD_FIX
  clear = sum(1 for e in readable
              if not e.blockers and not e.result.tf2x_stops)
  tf1 = [e for e in readable if e.tf1_lines]
  out = ["Before you run it", "-" * 79,
         "{} will run on TensorFlow 2 as far as this command can "
         "tell{}.".format(_of(clear, python),
                          "" if tf_ran or not tf1 else
                          ", once tf_upgrade_v2 has converted the rest of "
                          "the TF1 API (--tf_upgrade_v2; {} use{} it, first "
                          "(output lines): {})".format(
                              _plural(len(tf1), "file"),
                              "s" if len(tf1) == 1 else "",
                              ", ".join(e.where(e.tf1_lines[0], output=True)
                                        for e in tf1[:3])))]
  keras2_only = sum(1 for e in readable if e.blockers and all(
      b.what in _KERAS2_BLOCKERS for b in e.blockers))
  if keras2_only:
    out.append("{} more {} will run with Keras 2 (tf-keras on TensorFlow "
               "2.16+): \"Keras 2\" below.".format(
                   keras2_only, "file" if keras2_only == 1 else "files"))
  if not tf_ran and not tf1 and readable:
    out.append("No file uses TF1 API that tf_upgrade_v2 converts: do not "
               "run it (it would rename `tf.keras.optimizers.X` to "
               "`tf.keras.optimizers.legacy.X`, which Keras 3 refuses).")
  out.extend(_slim_note(python))
  out.extend(_stops(readable))
  out.extend(_not_kept(readable))
  if ranked:
    out.append("What still stops the others, most files first (each "
               "converted file's block below repeats its own):")
    for what, entries in sorted(ranked.items(),
                                key=lambda x: (-len(x[1]), x[0])):
      count = _plural(len(entries), "file")
      if what != UNREAD and not what.startswith(_TF_NOT_CONVERTED):
        count += ", " + _plural(uses[what], "use")
      out.append("  - {}: {} (first: {}). Fix: {}.".format(
          what, count, ", ".join(e.name for e in entries[:3]), fixes[what]))
  out.append("")
  return out


def _stops(python: List[walk.Entry]) -> List[str]:
  """Each TF 2.x Keras line left unconverted that stops its file."""
  lines = ["  - {}: {}. Fix: {}.".format(entry.where(line), what, fix)
           for entry in python for line, what, fix in entry.result.tf2x_stops]
  if not lines:
    return []
  return ["Lines this command could not convert, which stop their file or "
          "change its numbers on Keras 3 (those files are not counted as "
          "running):"] + lines


def _not_kept(python: List[walk.Entry]) -> List[str]:
  """What no spelling of TF 2.0-2.8's names keeps, most files first."""
  lost: Dict[str, List[walk.Entry]] = {}
  uses: Dict[str, int] = {}
  fixes: Dict[str, str] = {}
  for entry in python:
    for _, what, fix in entry.result.tf2x_lost:
      if entry not in lost.setdefault(what, []):
        lost[what].append(entry)
      uses[what] = uses.get(what, 0) + 1
      fixes.setdefault(what, fix)
  if not lost:
    return []
  out = ["What this command could not keep from TF 2.0-2.8 (the program "
         "runs, but not as it did there), most files first:"]
  for what, entries in sorted(lost.items(), key=lambda x: (-len(x[1]), x[0])):
    out.append("  - {}: {}, {} (first: {}). Fix: {}.".format(
        what, _plural(len(entries), "file"), _plural(uses[what], "use"),
        ", ".join(e.name for e in entries[:3]), fixes[what]))
  return out


# The start of the blocker `cli._find_blockers` adds for such a file.
_TF_NOT_CONVERTED = "the rest of the TF1 API"


def _tf_section(summary, tf_issues, shown, entries) -> List[str]:
  missed = summary.not_converted()
  out = ["tf_upgrade_v2 ({})".format(summary.command), "-" * 79,
         "Of {}, it converted {} (changed {}) and did NOT convert {}; {} "
         "in its report.".format(
             _plural(summary.processed + len(missed), "Python file"),
             summary.processed, len(summary.changed), len(missed),
             _plural(_count_issues(summary), "issue"))]
  for name, why in summary.failed:
    out.append("  {}: NOT CONVERTED BY tf_upgrade_v2: {}. {}.".format(
        name, why, summary.advice.get(name, "")))
  only = [name for name in summary.changed if name not in shown]
  if only:
    out.append("  changed by tf_upgrade_v2 only: {}{}".format(
        ", ".join(only[:5]), ", ..." if len(only) > 5 else ""))
  renamed = set(summary.layers_renamed) | set(summary.summary_renamed) | (
      set(summary.tpu_renamed))
  for name in sorted(renamed - set(shown)):
    out.extend("  {}: {}".format(name, line)
               for line in _renamed_after(summary, name, entries.get(name)))
  # Its issues in files listed above are already shown there; the rest are
  # grouped by message, since one message often repeats hundreds of times.
  grouped: Dict[str, List[str]] = {}
  for name, issues in sorted(tf_issues.items()):
    if name in shown:
      continue
    for line, kind, message in issues:
      entry = entries.get(name)
      grouped.setdefault("{}: {}".format(kind, message), []).append(
          entry.where(line, output=True) if entry is not None else
          "{}:{}".format(name, line))
  for message, where in sorted(grouped.items(),
                               key=lambda x: (-len(x[1]), x[0])):
    out.append("  x{} {} (first: {}; output lines)".format(
        len(where), message, ", ".join(where[:3])))
  for name in summary.unparsed:
    out.append("  {}: NOT CONVERTED BY tf_upgrade_v2: it could not parse it "
               "(it left the file empty); left as this command wrote "
               "it".format(name))
  for name, why in summary.not_given:
    out.append("  {}: NOT CONVERTED BY tf_upgrade_v2 (not given to it): "
               "{}".format(name, why))
  out.append("")
  return out


def _count_issues(summary) -> int:
  """tf_upgrade_v2's ERROR and WARNING lines; its INFO lines are notes."""
  return sum(1 for issue in summary.issues if issue[2] != "INFO")


def _total(plan, changed, failed, tf_summary) -> List[str]:
  python = plan.python()
  warnings = sum(len(e.result.warnings) for e in python)
  warned = sum(1 for e in python if e.result.warnings)
  modules: Dict[str, Tuple[int, int]] = {}
  for entry in python:
    for module, lines in entry.result.other_contrib.items():
      uses, files = modules.get(module, (0, 0))
      modules[module] = (uses + len(lines), files + 1)
  copied = sum(1 for e in plan.entries if e.kind in ("file", "link"))
  tf_line = ""
  if tf_summary is not None:
    tf_line = ("; tf_upgrade_v2 converted {} and did NOT convert {}".format(
        tf_summary.processed, len(tf_summary.not_converted())))
  out = ["Total", "-" * 79,
         "{}: {} read, {} converted, {} not parsed{}; other files "
         "and links: {}; skipped: {}.".format(
             _kinds(python), len(python), len(changed), len(failed), tf_line,
             copied,
             len(plan.skipped)),
         "Warnings to review: {} in {}.".format(
             warnings, _plural(warned, "file"))]
  if modules:
    top = sorted(modules.items(), key=lambda x: (-x[1][0], x[0]))
    out.append("Other tf.contrib modules still used: " + ", ".join(
        "{} ({} in {})".format(m, _plural(u, "use"), _plural(f, "file"))
        for m, (u, f) in top) + ".")
  out.append("Left to do by hand:")
  todo = []
  if warnings:
    todo.append("read the {} above: each is a rewrite that may not be what "
                "TensorFlow 2 should run.".format(_plural(warnings,
                                                          "warning")))
  if failed:
    todo.append("fix the {} that could not be parsed or decoded, then run "
                "again.".format(_plural(len(failed), "file")))
  if modules:
    todo.append("migrate the other tf.contrib modules (listed per file "
                "above); no converter does that.")
  if tf_summary is None and any(e.tf1_lines for e in python
                                if not e.result.error):
    todo.append("run TensorFlow's tf_upgrade_v2 over the output (or pass "
                "--tf_upgrade_v2) for the rest of the TF1 API{}.".format(
                    _legacy_rename_warning(python)))
  elif tf_summary is not None and _count_issues(tf_summary):
    todo.append("resolve tf_upgrade_v2's {}: {}.".format(
        _plural(_count_issues(tf_summary), "issue"),
        _quoted_issues(tf_summary, {e.name: e for e in python})))
  if tf_summary is not None and tf_summary.advice:
    todo.append("finish the {} tf_upgrade_v2 could not convert (listed "
                "above, with what to do).".format(
                    _plural(len(tf_summary.advice), "file")))
  keras2_files = sum(1 for e in python if _keras2_uses(e, tf_summary))
  if keras2_files:
    todo.append("run the {} that need{} Keras 2 with it: \"Keras 2\" above "
                "says how, and why.".format(
                    _plural(keras2_files, "file"),
                    "s" if keras2_files == 1 else ""))
  bare = sum(1 for e in python if e.result.bare_layers)
  if bare and tf_summary is None:
    todo.append("rename `tf.layers` to `tf.compat.v1.layers` in {} "
                "(--tf_upgrade_v2 does it).".format(_plural(bare, "file")))
  if plan.skipped:
    todo.append("check the {} listed above.".format(
        _plural(len(plan.skipped), "skipped path")))
  if any(e.result.slim_lines for e in python):
    todo.append("install tf_slim where the output runs ({}): the "
                "rewritten files import it.".format(slim.INSTALL))
  lost = sum(len(e.result.tf2x_lost) for e in python)
  if lost:
    todo.append("apply the fixes for the {} of TF 2.0-2.8 behaviour that "
                "\"Before you run it\" says could not be kept.".format(
                    _plural(lost, "use")))
  blocked = sum(1 for e in python if not e.result.error and (
      e.blockers or e.result.tf2x_stops))
  if blocked:
    todo.append("apply the fixes \"Before you run it\" names for the {} "
                "that will not run on TensorFlow 2 as they are.".format(
                    _plural(blocked, "file")))
  if not todo:
    todo.append("nothing this command knows of.")
  out.extend("  - " + t for t in todo)
  return out


# The blockers that Keras 2 (tf-keras) lifts.
_KERAS2_BLOCKERS = frozenset((keras2.WHAT, "tf.layers"))

# tf_upgrade_v2's INFO line for its rename to Keras 2's optimizers.
_LEGACY_RENAME = "to 'tf.keras.optimizers.legacy."


def _keras2_uses(entry: walk.Entry, tf_summary) -> List[Tuple[int, str]]:
  """`(output line, why)`: each use in `entry` that needs Keras 2."""
  if entry.result is None or entry.result.error:
    return []
  renamed = set()
  if tf_summary is not None:
    renamed = {line for name, line, _, message in tf_summary.issues
               if name == entry.name and _LEGACY_RENAME in message}
  uses = []
  for line, why in entry.keras2:
    if line in renamed and "optimizers.legacy" in why:
      why += " (tf_upgrade_v2 renamed `tf.keras.optimizers.X` to it here)"
    uses.append((line, why))
  for blocker in entry.blockers:
    if blocker.what == "tf.layers":
      uses.extend((line, keras2.LAYERS_WHY) for line in blocker.lines)
    elif blocker.what == blockers.OPTIMIZER_V2_SUBCLASS:
      uses.extend((line, "a subclass of a Keras optimizer that overrides "
                   "OptimizerV2's hooks: on Keras 2 it must subclass "
                   "`tf.keras.optimizers.legacy.X` (see its fix)")
                  for line in blocker.lines)
  return sorted(uses)


def _keras2(python: List[walk.Entry], tf_summary,
            here: Optional[Tuple[str, str]]) -> List[str]:
  """"Keras 2": which files need it, why, and how to get it, once."""
  needs = [(e, _keras2_uses(e, tf_summary)) for e in python]
  needs = [(e, uses) for e, uses in needs if uses]
  if not needs:
    return []
  out = ["Keras 2", "-" * 79,
         "{} use{} Keras 2 API that Keras 3, TensorFlow 2.16+'s default "
         "`tf.keras`, refuses (output lines):".format(
             _of(len(needs), python), "s" if len(needs) == 1 else "")]
  for entry, uses in needs:
    out.append("  " + entry.name)
    for line, why in uses:
      out.append("    {}: {}".format(entry.at(line, output=True), why))
  out.extend(keras2.install_advice(here))
  out.append("")
  return out


# A Keras optimizer class, which tf_upgrade_v2 renames to Keras 2's.
_KERAS_OPTIMIZER = re.compile(
    rb"\bkeras\.optimizers\.(?!legacy\b|schedules\b)[A-Z]\w*")


def _legacy_rename_warning(python: List[walk.Entry]) -> str:
  """What tf_upgrade_v2 will do to the Keras optimizers of TF1 files."""
  where = []
  for entry in python:
    if entry.result.error or not entry.tf1_lines:
      continue
    for number, text in enumerate(entry.output.splitlines(), 1):
      if _KERAS_OPTIMIZER.search(text):
        where.append(entry.where(number, output=True))
  if not where:
    return ""
  return ("; it renames `tf.keras.optimizers.X` ({}{}) to "
          "`tf.keras.optimizers.legacy.X`, which only Keras 2 has (with "
          "--tf_upgrade_v2, \"Keras 2\" lists each)").format(
              ", ".join(where[:3]), ", ..." if len(where) > 3 else "")


def _quoted_issues(tf_summary, entries) -> str:
  """tf_upgrade_v2's ERROR and WARNING lines, each with its file:line."""
  quoted = []
  for name, line, kind, message in tf_summary.issues:
    if kind == "INFO":
      continue
    entry = entries.get(name)
    where = (entry.where(line, output=True) if entry is not None else
             "{}:{}".format(name, line))
    quoted.append("{} ({}: {})".format(where, kind, _short(message)))
  shown = "; ".join(quoted[:5])
  if len(quoted) > 5:
    shown += "; and {} more, listed above".format(len(quoted) - 5)
  return shown


def _short(text: str, limit: int = 120) -> str:
  """`text`, cut to `limit` characters."""
  return text if len(text) <= limit else text[:limit - 3] + "..."
