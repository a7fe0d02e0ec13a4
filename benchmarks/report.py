# Copyright 2026 The contrib_mixed_precision Authors.
# SPDX-License-Identifier: Apache-2.0
"""The report: the machine, the table, the goals and their verdicts, the JSON.

Goals are printed, never asserted: each reads yes or no only when a paired
95% interval (`benchmarks/stats.py`) agrees as a whole, else 'not
resolved'. The JSON holds the machine, the settings and every row.
"""

import collections
import datetime
import json
import os
import platform

import tensorflow as tf

import contrib_mixed_precision as cmp
from benchmarks import models


def describe_machine(threads):
  """The machine, TF, threads and load: the JSON's "machine" at the start."""
  return {
      "date": datetime.datetime.now().isoformat(timespec="seconds"),
      "tensorflow": tf.__version__,
      "python": platform.python_version(),
      "platform": platform.platform(),
      "cpu": _cpu_name(),
      "cores": os.cpu_count(),
      "load_average": list(os.getloadavg()) if hasattr(os, "getloadavg")
                      else None,
      "intra_op_threads": threads[0],
      "inter_op_threads": threads[1],
      # Which tree's package was timed (benchmarks/pair.py checks).
      "package": os.path.dirname(os.path.abspath(cmp.__file__)),
  }


def _cpu_name():
  try:
    with open("/proc/cpuinfo") as f:
      for line in f:
        if line.startswith("model name"):
          return line.split(":", 1)[1].strip()
  except OSError:
    pass
  return platform.processor() or "unknown"


def load_average():
  """The 1, 5 and 15 minute load averages; None where there are none."""
  return list(os.getloadavg()) if hasattr(os, "getloadavg") else None


def format_table(results):
  """One line per case and configuration: times, ratios, points, ops."""
  lines = []
  row_format = ("{:<14} {:<14} {:>9} {:>6} {:>11} {:>6} {:>6} {:>6} {:>9} "
                "{:>6} {:>6} {:>6} {:>5}")
  header = row_format.format(
      "case", "config", "wall ms", "x bare", "round IQR", "-tf115", "-uflr",
      "-barr", "cpu ms", "x bare", "-tf115", "ops", "skips")
  lines.append(header)
  lines.append("-" * len(header))
  points = lambda row, key: ("{:+.1f}".format(row[key]) if key in row
                             else "")
  for case, rows in results.items():
    for name, row in rows.items():
      lines.append(row_format.format(
          case, name, "{:.2f}".format(row["median_ms"]),
          "{:.3f}".format(row["ratio"]),
          "{:.2f}-{:.2f}".format(*row["round_ratio_iqr"]),
          points(row, "points_over_tf115"),
          points(row, "points_over_unscale_floor"),
          points(row, "points_over_barrier"),
          "{:.2f}".format(row["cpu_median_ms"]),
          "{:.3f}".format(row["cpu_ratio"]),
          points(row, "cpu_points_over_tf115"), row.get("ops", ""),
          row.get("skipped_steps", "")))
  return "\n".join(lines)


# The limits on lso_exp over its floor, in points of the bare step,
# per mode; and on small_build's ratio of construction time to bare. The
# floor is TF 1.15's own step (`tf115`) since issue 41, the barrier plus a
# multiply per gradient (`unscale_floor`) before.
_FLOOR = "tf115"
_FLOOR_LIMITS = {"graph": 2.0, "graph_v1": 2.0, "function": 3.0,
                 "eager": 5.0}
_BUILD_LIMIT = 1.03
# lso_exp below tf_mp (the whole interval below zero) in this many of the
# step cases at least.
_BELOW_TF_MP_GOAL = 10
_STEP_CASES = tuple(c for c in models.GOAL_CASES
                    if models.split_case(c)[1] != "build")


def goals(results, config="lso_exp"):
  """The issue's goals, one line per case and a summary: never asserted.

  Per case: `config` over `_FLOOR`, TF 1.15's step (paired, wall and
  cpu), against the mode's limit, below tf_mp, and over barrier for
  reference; for small_build, the ratio to bare against `_BUILD_LIMIT`.
  Where the sparse opt-in was timed, a second line: lso_exp_sparse over
  `config` (it exists to be faster) and over unscale_floor, its reference.
  Each verdict is `_verdict`'s. The summary counts the step cases with
  `config` below tf_mp and reads each goal family as met (every case's
  interval meets it), not met (some case's interval excludes it) or not
  resolved.
  """
  lines = []
  families = collections.OrderedDict(
      (key, []) for key in ("graph", "function", "eager", "build", "sparse"))
  below_tf_mp = []
  for case, rows in results.items():
    if config not in rows:
      continue
    row = rows[config]
    _, mode = models.split_case(case)
    parts = []
    if mode == "build":
      paired = row["paired_ratio_to_bare"]
      ci = paired["ci95"]
      verdict = _verdict(paired, lambda x: x <= _BUILD_LIMIT)
      families["build"].append(verdict)
      parts.append("{:.3f} x bare (paired {:.3f} [95% CI {}]); at most "
                   "{:.2f}: {}".format(
                       row["ratio"], paired["median"],
                       "{:.3f}, {:.3f}".format(*ci) if ci else
                       "n/a: too few rounds", _BUILD_LIMIT, verdict))
    if _FLOOR in rows:
      paired = row["paired_points_over_" + _FLOOR]
      text = "over {} {} wall, {} cpu".format(
          _FLOOR, _paired_text(paired),
          _paired_text(row["cpu_paired_points_over_" + _FLOOR]))
      if mode in _FLOOR_LIMITS and case in models.GOAL_CASES:
        limit = _FLOOR_LIMITS[mode]
        verdict = _verdict(paired, lambda x, limit=limit: x <= limit)
        family = "graph" if mode in models.GRAPH_MODES else mode
        families[family].append(verdict)
        text += "; at most {:+.0f}: {}".format(limit, verdict)
      parts.append(text)
    if mode != "build" and "tf_mp" in rows:
      vs_tf = row["paired_points_over_tf_mp"]
      verdict = _verdict(vs_tf, lambda x: x < 0.0)
      if case in _STEP_CASES:
        below_tf_mp.append(verdict)
      parts.append("below tf_mp: {} ({:.3f} vs {:.3f}; paired {})".format(
          verdict, row["ratio"], rows["tf_mp"]["ratio"],
          _paired_text(vs_tf)))
    if "barrier" in rows:
      parts.append("over barrier {}".format(
          _paired_text(row["paired_points_over_barrier"])))
    lines.append("{:<14} {}".format(case, "; ".join(parts)))
    if "lso_exp_sparse" in rows and config == "lso_exp":
      lines.append(_sparse_line(case, rows, config, families["sparse"]))
    if (models.split_case(case)[0] in models.EMBEDDINGS and
        config == "lso_exp" and mode != "build"):
      line = _rows_line(case, rows, config)
      if line:
        lines.append(line)
  lines.append(_goals_summary(families, below_tf_mp))
  return "\n".join(lines)


def _sparse_line(case, rows, config, verdicts):
  """The sparse opt-in against the exact default (`config`, lso_exp).

  Appends to `verdicts` whether lso_exp_sparse is faster, and gives its
  points over unscale_floor, its reference, and over the exact default's
  floor.
  """
  row = rows["lso_exp_sparse"]
  _, mode = models.split_case(case)
  parts = []
  if mode != "build":
    # `paired_lso_exp_minus_this` is the package minus this row: negated,
    # this row over the package.
    minus = _negated(row["paired_lso_exp_minus_this"])
    verdict = _verdict(minus, lambda x: x < 0.0)
    verdicts.append(verdict)
    parts.append("over {} {} wall, {} cpu; faster: {}".format(
        config, _paired_text(minus),
        _paired_text(_negated(row["cpu_paired_lso_exp_minus_this"])),
        verdict))
  for ref in ("unscale_floor", _FLOOR):
    if ref in rows:
      parts.append("over {} {}".format(
          ref, _paired_text(row["paired_points_over_" + ref])))
  return "{:<14} lso_exp_sparse: {}".format(case, "; ".join(parts))


# Issue 51's goals for the embeddings. Where the exact default updates the
# touched rows (Adagrad, GradientDescent): within this many points of bare
# of the sparse opt-in, in graph mode. Where it stays dense (Momentum): at
# most this fraction of TF 1.15's step.
_ROWS_LIMIT = 10.0
_DENSE_FRACTION = 0.70


def _rows_line(case, rows, config):
  """Issue 51: the exact default against the sparse opt-in, or TF 1.15."""
  row = rows[config]
  model, _ = models.split_case(case)
  if model == "embmom":
    if "tf115" not in rows:
      return None
    paired = row["paired_ratio_to_tf115"]
    return "{:<14} {}: {:.3f} x tf115 (paired {}); at most {:.2f}: {}".format(
        case, config, row["median_ms"] / rows["tf115"]["median_ms"],
        _ratio_text(paired), _DENSE_FRACTION,
        _verdict(paired, lambda x: x <= _DENSE_FRACTION))
  if "lso_exp_sparse" not in rows:
    return None
  over = rows["lso_exp_sparse"]["paired_lso_exp_minus_this"]
  return "{:<14} {}: over lso_exp_sparse {}; at most {:+.0f}: {}".format(
      case, config, _paired_text(over), _ROWS_LIMIT,
      _verdict(over, lambda x: x <= _ROWS_LIMIT))


def _ratio_text(paired):
  ci = paired["ci95"]
  return "{:.3f} [95% CI {}]".format(
      paired["median"], "{:.3f}, {:.3f}".format(*ci) if ci else "n/a")


def _negated(paired):
  ci = paired["ci95"]
  return {"median": -paired["median"],
          "ci95": None if ci is None else [-ci[1], -ci[0]]}


def _goals_summary(families, below_tf_mp):
  """One line: the below-tf_mp count and each goal family's verdict."""
  met = below_tf_mp.count("yes")
  # Cases not timed, or not resolved, could still come out below tf_mp.
  possible = (len(below_tf_mp) - below_tf_mp.count("no") +
              len(_STEP_CASES) - len(below_tf_mp))
  if met >= _BELOW_TF_MP_GOAL:
    tf_mp_verdict = "met"
  elif possible < _BELOW_TF_MP_GOAL:
    tf_mp_verdict = "not met"
  else:
    tf_mp_verdict = "not resolved"
  parts = ["below tf_mp (95% CI below zero) in {} of {} timed step cases, "
           "goal at least {} of the {}: {}".format(
               met, len(below_tf_mp), _BELOW_TF_MP_GOAL, len(_STEP_CASES),
               tf_mp_verdict)]
  names = {"graph": "graph/graph_v1 at most +2 over " + _FLOOR,
           "function": "function at most +3",
           "eager": "eager at most +5",
           "build": "small_build at most {:.2f} x bare".format(_BUILD_LIMIT),
           "sparse": "lso_exp_sparse faster than lso_exp"}
  for key, verdicts in families.items():
    parts.append("{} in every case: {}".format(names[key],
                                               _family_verdict(verdicts)))
  return "summary: " + "; ".join(parts)


def _family_verdict(verdicts):
  """'met' when every case's interval meets the goal, 'not met' when some
  case's interval excludes it, else 'not resolved' (a median alone, without
  an interval, resolves nothing)."""
  if not verdicts:
    return "not timed"
  counts = "{} yes, {} no, {} unresolved".format(
      verdicts.count("yes"), verdicts.count("no"),
      len(verdicts) - verdicts.count("yes") - verdicts.count("no"))
  if "no" in verdicts:
    return "not met ({})".format(counts)
  if all(v == "yes" for v in verdicts):
    return "met ({})".format(counts)
  return "not resolved ({})".format(counts)


def variant_lines(results, variants):
  """One line per case and variant: lso_exp minus the variant, paired."""
  lines = []
  for case, rows in results.items():
    for name in variants:
      row = rows.get(name)
      if row is None or "paired_lso_exp_minus_this" not in row:
        continue
      lines.append("{:<14} {:<18} {} wall, {} cpu".format(
          case, name, _paired_text(row["paired_lso_exp_minus_this"]),
          _paired_text(row["cpu_paired_lso_exp_minus_this"])))
  return "\n".join(lines)


def _paired_text(paired):
  ci = paired["ci95"]
  return "{:+.1f} [95% CI {}]".format(
      paired["median"],
      "{:+.1f}, {:+.1f}".format(*ci) if ci else "n/a: too few rounds")


def _verdict(paired, holds):
  """'yes' or 'no' when the whole 95% interval agrees, else 'not resolved'."""
  ci = paired["ci95"]
  if ci is None:
    return "yes (median)" if holds(paired["median"]) else "no (median)"
  if holds(ci[0]) and holds(ci[1]):
    return "yes"
  if not holds(ci[0]) and not holds(ci[1]):
    return "no"
  return "not resolved"



def print_report(results, variants, machine):
  """The table, its legend, the goals and the variants' lines, on stdout."""
  print()
  print(format_table(results))
  print("\nwall ms / cpu ms: median per-step wall-clock / process-CPU time "
        "(small_build: graph-construction time); x bare: ratio of medians to "
        "bare; round IQR: quartiles of the per-round wall ratios to bare (the "
        "noise); -tf115, -uflr, -barr: points of the bare step over tf115 "
        "(TF 1.15's step, the floor), unscale_floor and barrier (wall; the "
        "second -tf115: cpu); ops: nodes the optimizer added to the graph, "
        "function bodies included; skips: steps skipped (must be 0).")
  print("\ngoals (lso_exp), against tf115, TF 1.15's step (barrier for "
        "reference; the sparse opt-in against lso_exp and unscale_floor): "
        "paired = the median over rounds of each round's difference, in "
        "points of that round's bare step (small_build: of each round's "
        "ratio to bare), with a distribution-free 95% confidence interval; "
        "a goal reads yes or no only when the whole interval agrees, else "
        "'not resolved'; a goal family is met when every case reads yes.")
  print(goals(results))
  if variants:
    print("\nvariants: lso_exp minus each, paired points of the bare step "
          "(wall, cpu), median [95% CI]; negative: the package is faster.")
    print(variant_lines(results, variants))
  print("\ntotal {:.0f}s, load at the end {}".format(
      machine["total_seconds"],
      ",".join("%.1f" % l for l in machine["load_average_end"] or [])))


def write_json(path, machine, settings, results):
  """The whole run as JSON: {"machine", "settings", "results"}."""
  with open(path, "w") as f:
    json.dump({"machine": machine, "settings": settings, "results": results},
              f, indent=1)
