#!/usr/bin/env python3
# Copyright 2026 The contrib_mixed_precision Authors.
# SPDX-License-Identifier: Apache-2.0
"""Writes the README's TensorFlow compatibility table.

From two sources, neither restated by hand: the supported range and the Python
versions of each TensorFlow in `contrib_mixed_precision/version.py`, and what
CI runs in the matrix, `requirements/environments.toml` (read by
`scripts/ci_matrix.py`, as `noxfile.py` reads it). A row says "tested in CI"
only when the matrix has an environment for that TensorFlow, and quotes the
version its requirements file pins and the Python it runs on; the row of
releases after the range names the tf-nightly pin, if an environment runs
one. The Python versions of the range that no environment runs are named
untested.

The table and its note on Python sit between the
`<!-- compat-table:start -->` and `<!-- compat-table:end -->` markers of
README.md. What each suite runs (the test files each leaves out), the host's
extra files and the Bazel targets sit between the
`<!-- ci-suites:start -->` and `<!-- ci-suites:end -->` markers of
docs/testing.md, where a contributor looks for them. Run this script after
changing either source; `--check` (used by `tests/version_test.py`) fails
when either page is stale.

Usage:
  python scripts/gen_compat_table.py          # rewrite both pages in place
  python scripts/gen_compat_table.py --check  # exit 1 if a page is stale
  python scripts/gen_compat_table.py --print  # print what they would hold
"""

import argparse
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ci_matrix  # pylint: disable=g-import-not-at-top,wrong-import-position

START_MARKER = "<!-- compat-table:start -->"
END_MARKER = "<!-- compat-table:end -->"
SUITES_START_MARKER = "<!-- ci-suites:start -->"
SUITES_END_MARKER = "<!-- ci-suites:end -->"
# Each generated block, the page that holds it, and its markers.
_PAGES = (("README.md", START_MARKER, END_MARKER),
          (os.path.join("docs", "testing.md"), SUITES_START_MARKER,
           SUITES_END_MARKER))

_REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def load_version_module(repo=_REPO):
  """Executes `contrib_mixed_precision/version.py` and returns its globals.

  The package is not imported: its `__init__` imports TensorFlow.

  Args:
    repo: The repository root.

  Returns:
    A dict of the module's globals.
  """
  path = os.path.join(repo, "contrib_mixed_precision", "version.py")
  namespace = {}
  with open(path, encoding="utf-8") as f:
    exec(compile(f.read(), path, "exec"), namespace)  # pylint: disable=exec-used
  return namespace


def _major_minor(version):
  """Returns (major, minor) of a "X.Y[.Z...]" version string."""
  match = re.match(r"^(\d+)\.(\d+)", version)
  if not match:
    raise ValueError("Cannot read a version from {!r}.".format(version))
  return int(match.group(1)), int(match.group(2))


def table_rows(version_module, matrix):
  """Returns the table as a list of (TensorFlow, Python, status) rows.

  Args:
    version_module: The globals of version.py, from `load_version_module`.
    matrix: The CI matrix, from `ci_matrix.load`.

  Returns:
    (TensorFlow, Python, Python in CI, status) rows: one per TensorFlow minor
    version in the supported range, newest first, framed by a row for newer
    and a row for older versions.

  Raises:
    ValueError: if the range spans major versions, or an environment of the
      matrix tests a TensorFlow release outside it, or a nightly inside it.
  """
  low = _major_minor(version_module["MIN_TF_VERSION"])
  high = _major_minor(version_module["MAX_TF_VERSION"])
  if low[0] != high[0]:
    raise ValueError("The supported range {}..{} spans major versions; teach "
                     "this script to list them.".format(low, high))
  tested, nightlies = {}, []
  for env in matrix.environments:
    mm = _major_minor(env.tf_version)
    if env.prerelease:
      # A nightly is the next release: it belongs after the range.
      if mm < high:
        raise ValueError(
            "{} tests {} {}, a nightly inside the supported range {}; a "
            "nightly is for the release after it.".format(
                env.requirements, env.tf_package, env.tf_version,
                version_module["TF_REQUIREMENT_RANGE"]))
      nightlies.append(env)
      continue
    if not low <= mm < high:
      raise ValueError(
          "{} tests TensorFlow {}, outside the supported range {}.".format(
              env.requirements, env.tf_version,
              version_module["TF_REQUIREMENT_RANGE"]))
    tested.setdefault(mm, []).append(env)
  pythons = version_module["TF_PYTHON_VERSIONS"]

  def ci_pythons(envs):
    return ", ".join(sorted({e.python for e in envs}, key=_as_tuple))

  def runs(envs, package=False):
    return "; ".join(
        "{}{} on Python {}, {}{}{}".format(
            e.tf_package + " " if package else "", e.tf_version, e.python,
            ci_matrix.runs(e, quote="`{}`".format),
            " " + e.note if e.note else "",
            ", and the {} suite under Bazel".format(matrix.bazel_suite)
            if e.name == matrix.bazel_env else "")
        for e in envs)

  major = low[0]
  if nightlies:
    newer = "imports with a warning; tested in CI ({})".format(
        runs(nightlies, package=True))
  else:
    newer = "untested: imports with a warning"
  rows = [(">= {}.{}".format(*high), "", ci_pythons(nightlies), newer)]
  for minor in range(high[1] - 1, low[1] - 1, -1):
    key = "{}.{}".format(major, minor)
    envs = tested.get((major, minor), [])
    if envs:
      status = "supported, tested in CI ({})".format(runs(envs))
    else:
      status = "supported, not tested in CI"
    python = "{}-{}".format(*pythons[key]) if key in pythons else "?"
    rows.append((key, python, ci_pythons(envs), status))
  rows.append(("< {}.{}".format(*low), "", "", "not supported: ImportError"))
  return rows


def _as_tuple(version):
  return tuple(int(x) for x in version.split("."))


def untested_pythons(version_module, matrix):
  """The Python versions of the supported range that no environment runs."""
  return [p for p in version_module["SUPPORTED_PYTHON_VERSIONS"]
          if p not in matrix.pythons]


def _and(items):
  items = list(items)
  return (", ".join(items[:-1]) + " and " + items[-1] if len(items) > 1
          else "".join(items))


def render_table(version_module, matrix):
  """Returns the markdown table and its Python note, ending with a newline."""
  lines = [
      "| TensorFlow | Python | Python in CI | contrib_mixed_precision {} |"
      .format(version_module["__version__"]),
      "| --- | --- | --- | --- |",
  ]
  lines += ["| {} | {} | {} | {} |".format(*row)
            for row in table_rows(version_module, matrix)]
  chroots = ["Python {} in a Debian {} chroot".format(p, d) for p, d in
             sorted({(e.python, e.debian) for e in matrix.environments
                     if e.debian}, key=lambda pd: _as_tuple(pd[0]))]
  untested = untested_pythons(version_module, matrix)
  python_note = (
      "Python: the versions that TensorFlow publishes wheels for; \"Python "
      "in CI\", those that CI runs that TensorFlow on. CI runs every "
      "environment on Python {}{}.".format(
          matrix.python,
          ", except {}".format(_and(chroots)) if chroots else ""))
  if untested:
    python_note += (" Python {} {} inside the range, but no CI environment "
                    "runs {}: untested.".format(
                        _and(untested), "are" if len(untested) > 1 else "is",
                        "them" if len(untested) > 1 else "it"))
  return "\n".join(lines + ["", python_note]) + "\n"


def render_suites(matrix):
  """Returns what each suite runs, the host's files and Bazel's targets."""
  notes = []
  for name, description in matrix.suites.items():
    excluded = sorted(matrix.suite_exclude.get(name, ()))
    text = "The {} suite: {}".format(name, description)
    if excluded:
      text += " ({})".format(", ".join("`{}`".format(t) for t in excluded))
    if notes:
      notes.append("")
    notes.append(text + ".")
  if matrix.host_include:
    notes += ["", "{}: every environment on the host's Python {} runs {} "
              "besides its suite ({}).".format(
                  matrix.host_description[:1].upper() +
                  matrix.host_description[1:], matrix.python,
                  "them" if len(matrix.host_include) > 1 else "it",
                  ", ".join("`{}`".format(t) for t in matrix.host_include))]
  notes += ["", "Bazel: `bazel build //...`, then `bazel test` on every "
            "target but {}, with TensorFlow {}.".format(
                ", ".join("`{}`".format(os.path.splitext(
                    os.path.basename(t))[0]) for t in matrix.bazel_exclude)
                or "none", matrix.get(matrix.bazel_env).tf_version)]
  return "\n".join(notes) + "\n"


def replace_table(readme_text, table, start_marker=START_MARKER,
                  end_marker=END_MARKER, page="README.md"):
  """Returns `readme_text` with the text between the markers set to `table`.

  Raises:
    ValueError: if the markers are missing, duplicated or out of order.
  """
  if (readme_text.count(start_marker) != 1 or
      readme_text.count(end_marker) != 1):
    raise ValueError("{} must contain {} and {} exactly once each."
                     .format(page, start_marker, end_marker))
  start = readme_text.index(start_marker) + len(start_marker)
  end = readme_text.index(end_marker)
  if end < start:
    raise ValueError("{} comes before {} in {}.".format(
        end_marker, start_marker, page))
  return readme_text[:start] + "\n" + table + readme_text[end:]


def main(argv=None):
  parser = argparse.ArgumentParser(
      description=("Generate the README's TensorFlow compatibility table, "
                   "and docs/testing.md's list of what each suite runs, from "
                   "contrib_mixed_precision/version.py and the CI matrix, "
                   "requirements/environments.toml."))
  mode = parser.add_mutually_exclusive_group()
  mode.add_argument("--check", action="store_true",
                    help="do not write; exit 1 if a page is out of date")
  mode.add_argument("--print", action="store_true", dest="print_only",
                    help="print both generated blocks to stdout and exit")
  parser.add_argument("--repo", default=_REPO,
                      help="repository root (default: %(default)s)")
  args = parser.parse_args(argv)

  try:
    matrix = ci_matrix.load(args.repo)
    blocks = (render_table(load_version_module(args.repo), matrix),
              render_suites(matrix))
  except (ValueError, OSError) as e:
    print("gen_compat_table: {}".format(e), file=sys.stderr)
    return 2
  if args.print_only:
    sys.stdout.write("\n".join(blocks))
    return 0
  stale = []
  for (page, start, end), block in zip(_PAGES, blocks):
    path = os.path.join(args.repo, page)
    try:
      with open(path, encoding="utf-8") as f:
        current = f.read()
      updated = replace_table(current, block, start, end, page)
    except (ValueError, OSError) as e:
      print("gen_compat_table: {}".format(e), file=sys.stderr)
      return 2
    if updated == current:
      continue
    stale.append(page)
    if not args.check:
      with open(path, "w", encoding="utf-8") as f:
        f.write(updated)
      print("gen_compat_table: updated {}".format(path))
  if args.check:
    if stale:
      print("gen_compat_table: {}'s generated compatibility text is stale; "
            "run `python scripts/gen_compat_table.py`.".format(
                " and ".join(stale)), file=sys.stderr)
      return 1
    print("gen_compat_table: README.md and docs/testing.md are up to date.")
  elif not stale:
    print("gen_compat_table: README.md and docs/testing.md already up to "
          "date.")
  return 0


if __name__ == "__main__":
  sys.exit(main())
