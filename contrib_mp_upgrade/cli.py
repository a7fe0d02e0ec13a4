# Copyright 2026 The contrib_mixed_precision Authors.
# SPDX-License-Identifier: Apache-2.0
"""The `contrib-mp-upgrade` command: flags, checks, and one run.

It takes the flags `tf_upgrade_v2` users know:

```
contrib-mp-upgrade --intree old/ --outtree new/ --reportfile report.txt
contrib-mp-upgrade --intree old/ --outtree new/ --tf_upgrade_v2
contrib-mp-upgrade --intree old/ --outtree new/ --contrib-to-slim
contrib-mp-upgrade --infile train.py --outfile train_tf2.py
contrib-mp-upgrade --infile train.ipynb --outfile train_tf2.ipynb
contrib-mp-upgrade --intree src/ --inplace
contrib-mp-upgrade --intree src/ --dry_run      # prints a diff, writes nothing
contrib-mp-upgrade --check src/ nb.ipynb        # lists what is left
```
"""

import dataclasses
import difflib
import os
import re
import sys
from typing import Callable, List, Optional, Sequence, Tuple

from contrib_mp_upgrade import blockers
from contrib_mp_upgrade import check as check_lib
from contrib_mp_upgrade import commit as commit_lib
from contrib_mp_upgrade import errors
from contrib_mp_upgrade import guards
from contrib_mp_upgrade import keras2
from contrib_mp_upgrade import notebook as notebook_lib
from contrib_mp_upgrade import options
from contrib_mp_upgrade import pins
from contrib_mp_upgrade import report as report_lib
from contrib_mp_upgrade import signals
from contrib_mp_upgrade import slim
from contrib_mp_upgrade import tf1_api
from contrib_mp_upgrade import tf_upgrade_v2_pass
from contrib_mp_upgrade import walk

PROG = report_lib.PROG
DEFAULT_REPORT = options.DEFAULT_REPORT
UpgradeError = errors.UpgradeError


@dataclasses.dataclass
class Outcome:
  """What one run did.

  Attributes:
    plan: The `walk.Plan`: every file and what it became.
    report: The report text (also written to `--reportfile` unless
      `dry_run`).
    diffs: For a dry run, one unified diff per changed Python file or
      notebook (of the notebook's JSON); else empty.
    tf_summary: The `tf_upgrade_v2` pass's summary, or None.
    leftovers: `(path, why)` of the backups or the staging directory that
      could not be removed once everything was in place.
    pin: The TensorFlow the tree pins (`pins.find`), which chose the
      `iterations` rule of the Keras optimizers made.
  """
  plan: walk.Plan
  report: str
  diffs: List[str]
  tf_summary: Optional[tf_upgrade_v2_pass.Summary] = None
  leftovers: List[Tuple[str, str]] = dataclasses.field(default_factory=list)
  pin: Optional[pins.Pin] = None

  @property
  def changed(self) -> List[str]:
    return [e.name for e in self.plan.python() if e.changed]


def _diff(name: str, old: bytes, new: bytes) -> str:
  old_lines = old.decode("utf-8", "replace").splitlines(keepends=True)
  new_lines = new.decode("utf-8", "replace").splitlines(keepends=True)
  return "".join(difflib.unified_diff(old_lines, new_lines, "a/" + name,
                                      "b/" + name))


def _readable(text: str) -> str:
  """`text` with each undecodable file-name byte written as `\\xNN`.

  File names that are not UTF-8 (a latin-1 `é` in an old tree) reach Python
  as lone surrogates, which no UTF-8 report or terminal can hold.
  """
  return _SURROGATE.sub(lambda m: "\\x{:02x}".format(
      ord(m.group()) - 0xDC00), text)


_SURROGATE = re.compile("[\udc80-\udcff]")


def _inside(path: str, directory: str) -> bool:
  path, directory = os.path.realpath(path), os.path.realpath(directory)
  return os.path.commonpath([path, directory]) == directory


def _check_out(out: Optional[str], flag: str, inplace: bool,
               dry_run: bool) -> Optional[str]:
  if inplace and out is not None:
    raise UpgradeError(
        "`--inplace` rewrites the input itself, so `{}` {!r} cannot be used "
        "with it. Drop one of them.".format(flag, out))
  if out is None and not (inplace or dry_run):
    raise UpgradeError(
        "Missing `{}`. Name where to write the result, or pass `--inplace` "
        "to rewrite the input, or `--dry_run` to only see a diff.".format(
            flag))
  return out


def _check_paths(infile, outfile, intree, outtree, inplace, dry_run):
  """Raises `UpgradeError` for every flag combination that cannot work."""
  if (infile is None) == (intree is None):
    raise UpgradeError(
        "Pass exactly one of `--infile` and `--intree`; received {}.".format(
            "both" if infile else "neither"))
  if infile is not None:
    if outtree is not None:
      raise UpgradeError(
          "`--outtree` goes with `--intree`, not `--infile`. Use "
          "`--outfile` to name the upgraded file.")
    if not os.path.isfile(infile):
      raise UpgradeError(
          "`--infile` {!r} is not an existing file. Pass the path of the "
          "Python file or notebook to upgrade.".format(infile))
    _check_out(outfile, "--outfile", inplace, dry_run)
    if (outfile is not None and os.path.exists(outfile) and
        os.path.samefile(infile, outfile)):
      raise UpgradeError(
          "`--outfile` {!r} is `--infile` itself. Use `--inplace` to rewrite "
          "a file in place.".format(outfile))
    return
  if outfile is not None:
    raise UpgradeError(
        "`--outfile` goes with `--infile`, not `--intree`. Use `--outtree` "
        "to name the upgraded tree.")
  if not os.path.isdir(intree):
    raise UpgradeError(
        "`--intree` {!r} is not an existing directory. Pass the root of the "
        "source tree to upgrade.".format(intree))
  _check_out(outtree, "--outtree", inplace, dry_run)
  if outtree is not None:
    if _inside(outtree, intree):
      raise UpgradeError(
          "`--outtree` {!r} is inside `--intree` {!r}. Choose a directory "
          "outside the input tree, or use `--inplace`.".format(outtree,
                                                              intree))
    if os.path.lexists(outtree) and (not os.path.isdir(outtree) or
                                     os.listdir(outtree)):
      raise UpgradeError(
          "`--outtree` {!r} already exists and is not an empty directory. "
          "Choose a new directory; this command never overwrites "
          "one.".format(outtree))


def _check_report(reportfile, infile, outfile, intree) -> None:
  """Raises `UpgradeError` when the report would replace code."""
  if reportfile is None:
    return
  real = os.path.realpath(reportfile)
  if any(os.path.realpath(p) == real for p in (infile, outfile)
         if p is not None) or (
             intree is not None and os.path.isfile(real) and
             real.endswith((".py", ".ipynb")) and _inside(real, intree)):
    raise UpgradeError(
        "`--reportfile` {!r} is a file this run converts or writes, which "
        "the report would replace. Name another file for the "
        "report.".format(reportfile))


# What `_find_blockers` ranks for a notebook's unconverted uses.
NOTEBOOK_LEFT = ("tf.contrib.mixed_precision in notebook IPython lines or "
                 "non-Python cells (not converted)")


def _find_blockers(plan: walk.Plan,
                   tf_summary: Optional[tf_upgrade_v2_pass.Summary],
                   contrib_to_slim: bool = False) -> None:
  """Reads what still stops each final output on TF 2.

  Where `tf_upgrade_v2` changed a file, the other `tf.contrib` modules it
  converted are no longer reported as left to do. Where some entry script
  of the tree already turns graph mode on, library modules' Session code is
  taken to run under it. After `--contrib-to-slim`, what is left of the
  modules `tf_slim` replaces has no exact equivalent there, and its fix
  says so.
  """
  python = [e for e in plan.python() if e.result.error is None]
  graph_mode = any(blockers.switches_graph_mode(e.output) for e in python)
  v1_shapes = any(blockers.switches_v1_shapes(e.output) for e in python)
  ref_variables = any(blockers.switches_ref_variables(e.output)
                      for e in python)
  for entry in python:
    entry.blockers = blockers.find(entry.output)
    if entry.notebook is not None and entry.notebook.left:
      # Uses in IPython lines and non-Python cells: masked from `find`.
      entry.blockers.append(blockers.Blocker(
          NOTEBOOK_LEFT, tuple(notebook_lib.left_lines(entry.notebook,
                                                       entry.output)),
          "convert each by hand (the report's WARNING lines name them)"))
    if graph_mode and not blockers.is_script(entry.output):
      entry.blockers = [b for b in entry.blockers
                        if b.what != blockers.SESSION]
    if v1_shapes and not blockers.is_script(entry.output):
      entry.blockers = [b for b in entry.blockers
                        if b.what != blockers.DIMENSION]
    if ref_variables and not blockers.is_script(entry.output):
      entry.blockers = [b for b in entry.blockers
                        if b.what != blockers.BY_NAME]
    if contrib_to_slim:
      entry.blockers = [
          dataclasses.replace(b, fix=slim.LEFT_FIX)
          if b.what in ("tf.contrib.layers", "tf.contrib.framework",
                        "tf.contrib.slim") else b
          for b in entry.blockers]
    # Keras 2's install advice is given once, in the report's "Keras 2".
    entry.blockers = [dataclasses.replace(b, fix=keras2.SEE)
                      if b.what == "tf.layers" else b
                      for b in entry.blockers]
    entry.keras2 = keras2.find(entry.output)
    if entry.keras2:
      entry.blockers.append(blockers.Blocker(
          keras2.WHAT, tuple(sorted({line for line, _ in entry.keras2})),
          keras2.SEE))
    if tf_summary is not None and entry.name in tf_summary.advice:
      entry.blockers.insert(0, blockers.Blocker(
          "the rest of the TF1 API (tf_upgrade_v2 could not convert the "
          "file)", (1,), tf_summary.advice[entry.name]))
    if entry.tf_upgrade_v2_changed:
      left = set(blockers.contrib_modules(entry.blockers))
      entry.result.other_contrib = {
          module: lines for module, lines in
          entry.result.other_contrib.items() if module in left}


def run(infile: Optional[str] = None, outfile: Optional[str] = None,
        intree: Optional[str] = None, outtree: Optional[str] = None,
        inplace: bool = False, copy_other_files: bool = True,
        dry_run: bool = False, tf_upgrade_v2: bool = False,
        reportfile: Optional[str] = DEFAULT_REPORT,
        progress: Optional[Callable[[int, int], None]] = None,
        jobs: Optional[int] = None,
        contrib_to_slim: bool = False) -> Outcome:
  """Upgrades a file or a tree and writes the report; the library form.

  Everything is read and decided first; then the output and the report are
  written all or nothing (see `contrib_mp_upgrade.commit`).

  Args:
    infile: A Python file to upgrade. Exactly one of `infile` and `intree`.
    outfile: Where to write the upgraded `infile`.
    intree: A directory to upgrade, recursively.
    outtree: Where to write the upgraded tree; must not exist or be empty.
    inplace: Rewrite `infile` or the files under `intree` themselves.
    copy_other_files: In tree mode, also copy files that are not `*.py`.
    dry_run: Write nothing; only compute the report and the diffs.
    tf_upgrade_v2: Also run TensorFlow's `tf_upgrade_v2` console script
      over the result, and fold its summary into the report.
    reportfile: Where to write the report; None for nowhere.
    progress: Called with `(files done, files in all)` while a tree is
      converted, if given.
    jobs: Worker processes for a tree; None for one per core.
    contrib_to_slim: Also rewrite the `tf.contrib.layers`, `framework`
      and `slim` names that `tf_slim` provides unchanged (before
      `tf_upgrade_v2` runs, so it never converts them differently).

  Returns:
    An `Outcome`.

  Raises:
    UpgradeError: The paths or flags cannot work, `tf_upgrade_v2` is
      missing or failed, or the output could not be written. Nothing was
      written in any of these cases.
  """
  _check_paths(infile, outfile, intree, outtree, inplace, dry_run)
  _check_report(reportfile, infile, outfile, intree)
  command = None
  if tf_upgrade_v2:
    command = tf_upgrade_v2_pass.find_command()
    if command is None:
      raise UpgradeError(
          "`--tf_upgrade_v2` needs TensorFlow's `tf_upgrade_v2` command, "
          "which is neither on PATH nor beside {!r}. Install TensorFlow in "
          "this environment (`pip install tensorflow`), or drop the flag "
          "and run `tf_upgrade_v2` yourself afterwards.".format(
              sys.executable))
  # Which TensorFlow the tree was written for decides the `iterations`
  # rule of the Keras optimizers made from TF 2.0-2.8's (contract 16).
  pin = pins.find(intree, single_file=infile)
  advance = pin.advance is True
  if infile is not None:
    # In place, a symbolic link's target is converted, and the link kept.
    target = os.path.realpath(infile) if inplace else infile
    plan = walk.scan_file(target, infile, contrib_to_slim, advance)
    source = infile
    destination = "in place" if inplace else (outfile or "nothing (dry run)")
    if inplace and os.path.islink(infile):
      destination = "in place, in {} (the target of the link)".format(target)
  else:
    plan = walk.scan_tree(intree, copy_other_files, progress, jobs,
                          contrib_to_slim, advance)
    source = intree
    destination = "in place" if inplace else (outtree or "nothing (dry run)")
  for entry in plan.python():
    if entry.result.error is None:
      # Before tf_upgrade_v2: whether the tree needs it at all.
      entry.tf1_lines = tf1_api.lines(entry.output)
  tf_summary = None
  if command is not None:
    tf_summary = tf_upgrade_v2_pass.run(plan, command)
  _find_blockers(plan, tf_summary, contrib_to_slim)
  text = _readable(report_lib.render(plan, source, destination,
                                     tf_summary, pin,
                                     keras2.installed_tensorflow()))
  # Only a dry run prints its diffs; difflib is quadratic on the repeated
  # lines of a large notebook's JSON.
  diffs = [_readable(_diff(e.name, e.original, e.written))
           for e in plan.python() if e.changed] if dry_run else []
  outcome = Outcome(plan=plan, report=text, diffs=diffs,
                    tf_summary=tf_summary, pin=pin)
  if dry_run:
    return outcome
  commit = commit_lib.Commit()
  finished = False
  try:
    _stage(commit, plan, text, infile, outfile, outtree, inplace,
           reportfile)
    # A pipe may take its time, and Ctrl-C must still stop the command.
    commit.write_streams()
    # Renaming into place is quick; a signal in the middle of it would
    # leave some files converted and others not, so it waits until the end.
    failure = None
    try:
      with signals.signals_deferred():
        try:
          commit.finish()
          finished = True
          outcome.leftovers = commit.leftovers
        except UpgradeError as e:
          failure = e
    except signals.Interrupted:
      if failure is None:
        raise
      # A signal held during renames that failed: the failure is the news.
    if failure is not None:
      raise failure
  except OSError as e:
    commit.abort()
    raise UpgradeError(
        "The output could not be put in place ({}); nothing was changed. Fix "
        "the cause and run the command again.".format(
            errors.describe_os_error(e)))
  except signals.Interrupted:
    if finished:
      return outcome  # It came too late: the output is complete.
    commit.abort()
    raise
  except BaseException:
    # A crash while staging: nothing staged may survive.
    commit.abort()
    raise
  return outcome


def _stage(commit: commit_lib.Commit, plan: walk.Plan, text: str,
           infile: Optional[str], outfile: Optional[str],
           outtree: Optional[str], inplace: bool,
           reportfile: Optional[str]) -> None:
  """Writes the output and the report to their temporary places."""
  if infile is not None:
    entry = plan.entries[0]
    if inplace:
      commit.stage_inplace([entry] if entry.changed else [])
    else:
      commit.stage_file(entry.written, outfile, "--outfile",
                        mode_from=infile)
  elif inplace:
    commit.stage_inplace([e for e in plan.python() if e.changed])
  else:
    extra = None
    if reportfile is not None and _inside(os.path.abspath(reportfile),
                                          os.path.abspath(outtree)):
      # The report goes into the new tree, which must appear whole.
      extra = {os.path.relpath(os.path.abspath(reportfile),
                               os.path.abspath(outtree)):
                   text.encode("utf-8")}
      reportfile = None
    commit.stage_tree(plan, outtree, extra)
  if reportfile is not None:
    commit.stage_file(text.encode("utf-8"), reportfile, "--reportfile")


def _show_progress(done: int, total: int) -> None:
  """A count on stderr (a terminal), updated in place."""
  if done == total or done % 25 == 0:
    sys.stderr.write("\r{}: {}/{} Python files{}".format(
        PROG, done, total, "\n" if done == total else ""))
    sys.stderr.flush()


# The flags live in `options`, which needs no libcst (`--help`, `--version`).
parser = options.parser


def _echo_to_stderr(outcome: Outcome) -> None:
  """Prints what a user must not miss, even without reading the report."""
  for entry in outcome.plan.python():
    for line, message in entry.result.warnings:
      if message.startswith(guards.NEVER_RAN):
        print(_readable("{}: warning: {}: {}".format(
            PROG, entry.where(line), message)), file=sys.stderr)
  if outcome.tf_summary is not None:
    for name, why in outcome.tf_summary.failed:
      print(_readable(
          "{}: warning: {}: NOT CONVERTED BY tf_upgrade_v2: {}. {}.".format(
              PROG, name, why, outcome.tf_summary.advice.get(name, ""))),
            file=sys.stderr)


def _interrupted(e: signals.Interrupted) -> int:
  """Says that a signal stopped the command; its exit status."""
  print("{}: interrupted ({}); nothing was written.".format(PROG, e),
        file=sys.stderr)
  return 128 + e.signum


def main(argv: Optional[Sequence[str]] = None) -> int:
  """The `contrib-mp-upgrade` command.

  Args:
    argv: The arguments, without the program name; None for `sys.argv[1:]`.

  Returns:
    The exit status: 0 when the input was processed, 1 when it could not be
    (and nothing was written).
  """
  args = parser().parse_intermixed_args(argv)
  if args.check or args.paths:
    with signals.stop_on_signals():
      try:
        return check_lib.main(parser, argv)  # Reads only; its own status.
      except signals.Interrupted as e:
        return _interrupted(e)
  progress = _show_progress if sys.stderr.isatty() else None
  with signals.stop_on_signals():
    try:
      outcome = run(infile=args.infile, outfile=args.outfile,
                    intree=args.intree, outtree=args.outtree,
                    inplace=args.inplace,
                    copy_other_files=args.copyotherfiles,
                    dry_run=args.dry_run, tf_upgrade_v2=args.tf_upgrade_v2,
                    reportfile=None if args.dry_run else args.reportfile,
                    progress=progress, jobs=args.jobs,
                    contrib_to_slim=args.contrib_to_slim)
    except signals.Interrupted as e:
      if progress is not None:
        sys.stderr.write("\n")
      return _interrupted(e)
    except (UpgradeError, OSError) as e:
      print(_readable("{}: error: {}".format(PROG, e)), file=sys.stderr)
      return 1
  n_changed = len(outcome.changed)
  _echo_to_stderr(outcome)
  for path, why in outcome.leftovers:
    print(_readable("{}: warning: {!r} could not be removed ({}); "
                    "delete it.".format(PROG, path, why)),
          file=sys.stderr)
  if args.dry_run:
    return _to_stdout(
        "".join(outcome.diffs) + outcome.report +
        "Dry run: {} file(s) would change; nothing was written.\n".format(
            n_changed), "the dry run's diffs and report")
  python = outcome.plan.python()
  n_failed = sum(1 for e in python if e.result.error)
  n_warnings = sum(len(e.result.warnings) for e in python)
  tf_missed = ""
  if outcome.tf_summary is not None:
    tf_missed = "; tf_upgrade_v2 did not convert {}".format(
        len(outcome.tf_summary.not_converted()))
  return _to_stdout(
      "{}: changed {} file(s); {} could not be parsed and were copied "
      "unchanged{}; {} warning(s); {} path(s) skipped. Report: {}\n".format(
          PROG, n_changed, n_failed, tf_missed, n_warnings,
          len(outcome.plan.skipped), args.reportfile),
      "the summary (the output is in place)")


def _to_stdout(text: str, what: str) -> int:
  """Writes `text` to stdout; the exit status.

  A stdout that cannot take it (`> /dev/full`) is an error in one line.
  A reader that went away (`| head`) raises `BrokenPipeError`, which the
  entry point ends quietly.
  """
  try:
    sys.stdout.write(text)
    sys.stdout.flush()
  except BrokenPipeError:
    raise
  except OSError as e:
    stdout_to_devnull()
    print("{}: error: {} could not be written to standard output ({}).".format(
        PROG, what, errors.describe_os_error(e)), file=sys.stderr)
    return 1
  return 0


def stdout_to_devnull() -> None:
  """Points stdout at /dev/null: what Python still holds for it is dropped
  there at exit, instead of failing again."""
  null = os.open(os.devnull, os.O_WRONLY)
  os.dup2(null, sys.stdout.fileno())
  os.close(null)
